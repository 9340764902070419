#!/usr/bin/env bash
# Translations: every source file with messages is listed in
# po/POTFILES.in (and none without), every message is extracted whole (a
# macro such as G_GINT64_FORMAT inside _() cuts the msgid short, so it is
# never translated: write PRId64, which gettext knows), and po/fr.po
# translates every message (none untranslated or fuzzy) and keeps none
# that is gone (no obsolete "#~" entry either).
#
#   scripts/check-po.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# The tools' own words (msgcmp's "not used") and the order of sort/comm.
export LC_ALL=C

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

# meson's 'glib' preset (po/meson.build), and this project's functions
# that take a format.
args=(--from-code=UTF-8 --add-comments --keyword=_ --keyword=N_ --keyword=C_:1c,2 --keyword=NC_:1c,2
      --keyword=g_dcgettext:2 --keyword=g_dngettext:2,3 --keyword=g_dpgettext2:2c,3
      --flag=N_:1:pass-c-format --flag=C_:2:pass-c-format --flag=NC_:2:pass-c-format
      --flag=g_dngettext:2:pass-c-format --flag=g_strdup_printf:1:c-format --flag=g_string_printf:2:c-format
      --flag=g_string_append_printf:2:c-format --flag=g_error_new:3:c-format --flag=g_set_error:4:c-format
      --flag=g_markup_printf_escaped:1:c-format --flag=g_log:3:c-format --flag=g_print:1:c-format
      --flag=g_printerr:1:c-format --flag=g_printf:1:c-format --flag=g_fprintf:2:c-format
      --flag=g_sprintf:2:c-format --flag=g_snprintf:3:c-format
      --flag=g_warning:1:c-format --flag=g_message:1:c-format --flag=g_info:1:c-format
      --flag=g_debug:1:c-format --flag=g_critical:1:c-format
      --flag=fail:2:c-format --flag=_tessera_set_io_error:3:c-format)

# Which files have messages: xgettext itself says, over every source file.
find core tools plugins -name '*.[ch]' | sort > "$tmp/sources"
xgettext "${args[@]}" -f "$tmp/sources" -o "$tmp/all.pot" 2>/dev/null || status=1
sed -n 's/^#: //p' "$tmp/all.pot" | tr ' ' '\n' | sed 's/:[0-9]*$//' | sed '/^$/d' | sort -u > "$tmp/used"
grep -v '^#' po/POTFILES.in | sed '/^$/d' | sort > "$tmp/listed"
comm -13 "$tmp/listed" "$tmp/used" > "$tmp/missing"
if [ -s "$tmp/missing" ]; then
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

xgettext "${args[@]}" -f po/POTFILES.in -o "$tmp/tessera.pot" 2> "$tmp/xgettext.err" || status=1
if grep -q . "$tmp/xgettext.err"; then
  echo "check-po: xgettext:"
  sed 's/^/  /' "$tmp/xgettext.err"
  status=1
fi
# A GLib format macro inside _() wherever it stands (xgettext warns only
# in a format position it knows).
if grep -nE '(^|[^A-Za-z0-9_])N?_ *\("([^"\\]|\\.)*" *G_G[A-Z0-9]*_FORMAT' $(cat "$tmp/sources") > "$tmp/macros"; then
  echo "check-po: a GLib format macro inside _() (the msgid ends there; use PRId64 and the like):"
  sed 's/^/  /' "$tmp/macros"
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
if grep -n '^#~' po/fr.po > "$tmp/obsolete"; then
  echo "check-po: po/fr.po keeps obsolete entries:"
  sed 's/^/  /' "$tmp/obsolete"
  status=1
fi
[ "$status" -eq 0 ] && echo "check-po: $(grep -c '^msgid ' "$tmp/tessera.pot") messages, all translated in po/fr.po"
exit "$status"
