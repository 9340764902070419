#!/usr/bin/env python3
# extract-readme-api.py README OUTPUT: turns the C block of the README's
# "The API in short" into a function test-embed.c runs, with the folder
# path the README names replaced by the test's own.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import sys

text = open(sys.argv[1], encoding='utf-8').read()
section = text.index('## The API in short')
start = text.index('```c\n', section) + len('```c\n')
end = text.index('```\n', start)
lines = [line for line in text[start:end].splitlines() if not line.startswith('#include')]
body = '\n'.join('  ' + line if line else '' for line in lines)
if '"/var/lib/tessera/cpu"' not in body:
    sys.exit('the README example no longer names /var/lib/tessera/cpu')
body = body.replace('"/var/lib/tessera/cpu"', 'folder')
with open(sys.argv[2], 'w', encoding='utf-8') as out:
    out.write('/* Generated from README.md by extract-readme-api.py. */\n'
              '#include <tessera/tessera.h>\n\n'
              'int readme_api (const char *folder);\n\n'
              'int\nreadme_api (const char *folder)\n{\n' + body + '\n  return 0;\n}\n')
