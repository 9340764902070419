#!/usr/bin/env python3
# check-html-descriptions.py DOCDIR: fails when a page of the built
# reference says "No description available" (gi-docgen's words for a
# member without documentation: the parent_class and virtual function
# fields of the class structures, which check-gir-docs.py cannot see in
# the GIR).
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import glob
import os
import sys

MISSING = 'No description available'

pages = sorted(glob.glob(os.path.join(sys.argv[1], '*.html')))
if not pages:
    sys.exit('%s: no page: is the reference built?' % sys.argv[1])
total = 0
for page in pages:
    with open(page, encoding='utf-8') as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines):
        if MISSING in line:
            # The member's name is a few lines above, in its <dt>.
            member = next((lines[i].strip() for i in range(number, max(number - 8, -1), -1)
                           if '<code>' in lines[i]), '?')
            print('%s:%d: %s: %s' % (os.path.basename(page), number + 1, MISSING, member), file=sys.stderr)
            total += 1
if total:
    sys.exit('%d members of the reference have no description' % total)
print('%d pages, every member described' % len(pages))
