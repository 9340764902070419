/* tessera-i18n.c: the library's messages, in its own gettext domain
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-private.h"

#include <libintl.h>

const char *
_tessera_gettext (const char *msgid)
{
  static gsize bound = 0;

  if (g_once_init_enter (&bound))
    {
      /* TESSERA_LOCALEDIR: catalogues of a build tree (meson devenv, tests). */
      const char *dir = g_getenv ("TESSERA_LOCALEDIR");
      bindtextdomain (GETTEXT_PACKAGE, dir && *dir ? dir : LOCALEDIR);
      bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
      g_once_init_leave (&bound, 1);
    }
  return g_dgettext (GETTEXT_PACKAGE, msgid);
}
