/* tessera.h: the single header of libtessera-1
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#define TESSERA_INSIDE

#include <tessera/tessera-version.h>
#include <tessera/tessera-error.h>
#include <tessera/tessera-json.h>
#include <tessera/tessera-folder-path.h>
#include <tessera/tessera-pool-part.h>
#include <tessera/tessera-settings.h>
#include <tessera/tessera-process.h>
#include <tessera/tessera-process-type.h>
#include <tessera/tessera-job.h>
#include <tessera/tessera-lock.h>
#include <tessera/tessera-locks.h>
#include <tessera/tessera-dynamic-resource.h>
#include <tessera/tessera-dynamic-lock-file.h>
#include <tessera/tessera-dynamic-dependency.h>
#include <tessera/tessera-dynamic-dependency-lock.h>
#include <tessera/tessera-dynamic-dependency-locks.h>
#include <tessera/tessera-job-dependency-lock.h>
#include <tessera/tessera-job-dependency-locks.h>
#include <tessera/tessera-tracked-dynamic-resource.h>
#include <tessera/tessera-counter-lock-file.h>
#include <tessera/tessera-counter-dependency.h>
#include <tessera/tessera-counter-resource.h>
#include <tessera/tessera-acquire.h>
#include <tessera/tessera-cleaned.h>
#include <tessera/tessera-own-lock-file.h>
#include <tessera/tessera-pool-cleaning.h>
#include <tessera/tessera-plugin-info.h>
#include <tessera/tessera-registry.h>

#undef TESSERA_INSIDE
