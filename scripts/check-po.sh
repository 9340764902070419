#!/usr/bin/env bash
# Translations: every source file with messages is listed in
# po/POTFILES.in, xgettext reads every message whole (a macro such as
# G_GINT64_FORMAT inside _() cuts the msgid short, so it is never
# translated: write PRId64, which gettext knows), and po/fr.po translates
# every message (none untranslated or fuzzy) and keeps none that is gone.
#
#   scripts/check-po.sh
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

grep -v '^#' po/POTFILES.in | sed '/^$/d' | sort > "$tmp/listed"
grep -rlE '(^|[^A-Za-z0-9_])N?_\("' core tools plugins --include='*.c' --include='*.h' | sort > "$tmp/used"
if ! comm -13 "$tmp/listed" "$tmp/used" > "$tmp/missing" || [ -s "$tmp/missing" ]; then
  echo "check-po: files with messages missing from po/POTFILES.in:"
  sed 's/^/  /' "$tmp/missing"
  status=1
fi
comm -23 "$tmp/listed" "$tmp/used" > "$tmp/stale"
if [ -s "$tmp/stale" ]; then
  echo "check-po: po/POTFILES.in lists files without messages (or gone):"
  sed 's/^/  /' "$tmp/stale"
  status=1
fi

# The keywords of meson's 'glib' preset.
xgettext --from-code=UTF-8 --add-comments --keyword=_ --keyword=N_ --keyword=C_:1c,2 --keyword=NC_:1c,2 \
  --keyword=g_dcgettext:2 --keyword=g_dngettext:2,3 --keyword=g_dpgettext2:2c,3 --flag=N_:1:pass-c-format \
  --flag=C_:2:pass-c-format --flag=NC_:2:pass-c-format --flag=g_set_error:4:c-format \
  --flag=g_strdup_printf:1:c-format --flag=g_string_printf:2:c-format --flag=g_printf:1:c-format \
  -f po/POTFILES.in -o "$tmp/tessera.pot" 2> "$tmp/xgettext.err" || status=1
if grep -q . "$tmp/xgettext.err"; then
  echo "check-po: xgettext:"
  sed 's/^/  /' "$tmp/xgettext.err"
  status=1
fi
if ! msgfmt -c -o /dev/null po/fr.po 2> "$tmp/msgfmt.err"; then
  echo "check-po: po/fr.po:"
  sed 's/^/  /' "$tmp/msgfmt.err"
  status=1
fi
# Untranslated and fuzzy entries count as missing.
if ! msgcmp po/fr.po "$tmp/tessera.pot" > "$tmp/msgcmp.err" 2>&1 || grep -q 'not used' "$tmp/msgcmp.err"; then
  echo "check-po: po/fr.po against the sources' messages:"
  sed 's/^/  /' "$tmp/msgcmp.err"
  status=1
fi
[ "$status" -eq 0 ] && echo "check-po: $(grep -c '^msgid ' "$tmp/tessera.pot") messages, all translated in po/fr.po"
exit "$status"
