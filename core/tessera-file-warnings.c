/* tessera-file-warnings.c: warnings about single files of a pool, said
 * as one when a look at it finds many
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-file-warnings-private.h"
#include "tessera-private.h"

/* What a refresh reads is read in the thread that asked for it (under
 * ipc.lock): a hundred lock files that cannot be read make one warning
 * of that refresh, not a hundred. NULL: not kept, said at once. */
static GPrivate kept = G_PRIVATE_INIT ((GDestroyNotify) g_ptr_array_unref);

gboolean
_tessera_file_warnings_begin (void)
{
  if (g_private_get (&kept) != NULL)
    return FALSE;
  g_private_set (&kept, g_ptr_array_new_with_free_func (g_free));
  return TRUE;
}

void
_tessera_file_warning (const char *format, ...)
{
  GPtrArray *warnings = g_private_get (&kept);
  va_list ap;
  char *text;

  va_start (ap, format);
  text = g_strdup_vprintf (format, ap);
  va_end (ap);
  if (warnings != NULL)
    g_ptr_array_add (warnings, text);
  else
    {
      g_warning ("%s", text);
      g_free (text);
    }
}

void
_tessera_file_warnings_end (gboolean began, const char *owner_name)
{
  g_autoptr(GPtrArray) warnings = NULL;

  if (!began)
    return;
  warnings = g_private_get (&kept);
  /* Taken out first (not freed: ours now): a warning said below is not kept. */
  g_private_set (&kept, NULL);
  if (warnings->len == 1)
    g_warning ("%s", (const char *) g_ptr_array_index (warnings, 0));
  else if (warnings->len > 1)
    g_warning (_("%u lock files of %s cannot be read in full; the first: %s"), warnings->len, owner_name,
               (const char *) g_ptr_array_index (warnings, 0));
}
