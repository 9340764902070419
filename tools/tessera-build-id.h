/* tessera-build-id.h: which build this is (`tessera --version`)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

/* `git describe` of the source when it was configured or built, or the
 * version outside git: two builds of one version tell themselves apart. */
extern const char tessera_build_id[];
