/* test-security-fence.c: the fencing counter: what a member plants beside
 * ipc.lock (issue 40, point 3) cannot make another's token go back or
 * stop.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-security-common.h"

/* The fencing token a `tessera run --need r` of @user (NULL: root) gives
 * its command; fails the test when the run fails. What the run said, its
 * warnings too, in *@said when given. */
static gint64
users_token (Fixture *f, const char *user, char **said)
{
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;
  gint64 value = 0;
  gboolean found = FALSE;
  int status;

  status = tessera_by (f, user, &out, FALSE, "run", "--no-wait", "--need", "r", "--",
                       "sh", "-c", "printf '%s\\n' \"${TESSERA_FENCING_TOKEN-unset}\"", NULL);
  if (status != 0)
    g_error ("the run of %s failed (%d): %s", user != NULL ? user : "root", status, out);
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL && !found; i++)
    found = g_str_has_prefix (lines[i], "r:") &&
            g_ascii_string_to_signed (lines[i] + 2, 10, 1, G_MAXINT64, &value, NULL);
  if (!found)
    g_error ("the command was given no TESSERA_FENCING_TOKEN r:TOKEN: %s", out);
  if (said != NULL)
    *said = g_steal_pointer (&out);
  return value;
}

/* The fencing token a `tessera run --need r` of the first user gives its
 * command; fails the test when the run fails. */
static gint64
first_users_token (Fixture *f)
{
  return users_token (f, f->gp->users->users[0], NULL);
}

/* The bound of the fencing counter for the clock now, as the library
 * reckons it: 2^20 a second since 2020-01-01 UTC, the clock read as no
 * earlier than 2026-01-01 UTC. */
static gint64
fence_bound_now (void)
{
  gint64 us = MAX (g_get_real_time (), G_GINT64_CONSTANT (1767225600) * G_USEC_PER_SEC) -
              G_GINT64_CONSTANT (1577836800) * G_USEC_PER_SEC;

  return us / G_USEC_PER_SEC * 1048576 + us % G_USEC_PER_SEC * 1048576 / G_USEC_PER_SEC;
}

/* A member writes the largest number but one in the part of the counter
 * her name gives (fence.UID, hers, a regular file): the next grants still
 * succeed, their tokens rise, and stay far below the largest value; once
 * she removes it, a grant still succeeds. Fails before: the first grant
 * after it takes 2^63 - 1, and from then on every run fails, saying that
 * the counter is at its largest value. */
static void
test_fence_huge_value (Fixture *f, gconstpointer data)
{
  guint member = test_uid_of (f->gp->users->users[1]);
  g_autofree char *plant_huge = g_strdup_printf ("printf '9223372036854775806\\n' > \"$1/r/fence.%u\"", member);
  g_autofree char *unplant = g_strdup_printf ("rm -f \"$1/r/fence.%u\"", member);
  gint64 tokens[4];

  init_group_pool (f);
  tokens[0] = first_users_token (f);
  plant (f, plant_huge);
  tokens[1] = first_users_token (f);
  tokens[2] = first_users_token (f);
  plant (f, unplant);
  tokens[3] = first_users_token (f);
  g_test_message ("tokens: %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT,
                  tokens[0], tokens[1], tokens[2], tokens[3]);
  for (guint i = 1; i < G_N_ELEMENTS (tokens); i++)
    g_assert_cmpint (tokens[i], >, tokens[i - 1]);
  g_assert_cmpint (tokens[3], <, G_GINT64_CONSTANT (1) << 62);
}

/* A member's part above the bound of this host's clock, as a host whose
 * clock is ahead writes once the tokens were raised to its bound (here
 * 2^30, about 17 minutes, above it): the first user's next grants still
 * give tokens above it (tokens never go back from one user to another),
 * and her run warns, once, naming the part. Fails before: the token is
 * the bound plus one, below the member's. */
static void
test_fence_clock_ahead (Fixture *f, gconstpointer data)
{
  guint member = test_uid_of (f->gp->users->users[1]);
  g_autofree char *part = g_strdup_printf ("fence.%u", member);
  g_autofree char *part_path = g_build_filename (f->gp->pool, "r", part, NULL);
  g_autofree char *said = NULL;
  g_autofree char *script = NULL;
  gint64 planted, tokens[2];

  init_group_pool (f);
  g_assert_cmpint (first_users_token (f), >, 0);
  planted = fence_bound_now () + (G_GINT64_CONSTANT (1) << 30);
  script = g_strdup_printf ("printf '%" G_GINT64_FORMAT "\\n' > \"$1/r/%s\"", planted, part);
  plant (f, script);
  tokens[0] = users_token (f, f->gp->users->users[0], &said);
  tokens[1] = first_users_token (f);
  g_test_message ("planted %" G_GINT64_FORMAT ", tokens %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT, planted,
                  tokens[0], tokens[1]);
  g_assert_cmpint (tokens[0], >, planted);
  g_assert_cmpint (tokens[1], >, tokens[0]);
  g_assert_nonnull (strstr (said, part_path));
}

/* The part of a host whose clock is ahead, as it is seen where every
 * other user's part is owned by nobody (NFS with root_squash or
 * all_squash, or user names that do not map): fence.4242, the member's,
 * a quarter of the slack above this host's bound (the tokens had reached
 * the bound, as after a planted value, and that host's bound is ahead).
 * The first user's next token is above it: tokens keep their order across
 * hosts whose clocks differ by less than an hour, squashed or not. Fails
 * before: a part whose owner is not its name's counted only up to the
 * bound, and the token (the bound and one) was below the other host's. */
static void
test_fence_clock_ahead_squashed (Fixture *f, gconstpointer data)
{
  g_autofree char *script = NULL;
  gint64 planted, token;

  init_group_pool (f);
  g_assert_cmpint (first_users_token (f), >, 0);
  planted = fence_bound_now () + (G_GINT64_CONSTANT (1) << 30);
  script = g_strdup_printf ("printf '%" G_GINT64_FORMAT "\\n' > \"$1/r/fence.4242\"", planted);
  plant (f, script);
  token = first_users_token (f);
  g_test_message ("planted %" G_GINT64_FORMAT ", token %" G_GINT64_FORMAT, planted, token);
  g_assert_cmpint (token, >, planted);
}

/* A member plants root's part (fence.0, hers) holding the largest number
 * but one: it is not root's, so root counts it as everyone does, up to
 * the bound and its slack (2^32); root's token stays at most one above
 * that, far below the largest number, and the first user's next token is
 * above root's. */
static void
test_fence_root_name_planted (Fixture *f, gconstpointer data)
{
  gint64 tokens[3], bound;

  init_group_pool (f);
  tokens[0] = first_users_token (f);
  plant (f, "printf '9223372036854775806\\n' > \"$1/r/fence.0\"");
  tokens[1] = users_token (f, NULL, NULL);
  bound = fence_bound_now ();
  tokens[2] = first_users_token (f);
  g_test_message ("tokens %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT " (root's; bound %" G_GINT64_FORMAT "), %"
                  G_GINT64_FORMAT, tokens[0], tokens[1], bound, tokens[2]);
  g_assert_cmpint (tokens[1], >, tokens[0]);
  g_assert_cmpint (tokens[1], <=, bound + (G_GINT64_CONSTANT (1) << 32) + 1);
  g_assert_cmpint (tokens[2], >, tokens[1]);
}

/* A member's part that is no number, a FIFO, a folder, a link or longer
 * than any part blocks no grant: each is left out, and the tokens still
 * rise. Fails before: the first, junk, stops the run ("does not hold a
 * number"). */
static void
test_fence_unreadable_parts (Fixture *f, gconstpointer data)
{
  static const char *kinds[] = {
    "printf 'junk\\n' > \"$f\"",
    "mkfifo \"$f\"",
    "mkdir \"$f\"",
    "ln -s \"$2/a.json\" \"$f\"",
    "head -c 200 /dev/zero | tr '\\0' 7 > \"$f\"",
  };
  guint member = test_uid_of (f->gp->users->users[1]);
  gint64 last;

  init_group_pool (f);
  last = first_users_token (f);
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      g_autofree char *script = g_strdup_printf ("f=\"$1/r/fence.%u\"; %s", member, kinds[i]);
      g_autofree char *unplant = g_strdup_printf ("rm -rf \"$1/r/fence.%u\"", member);
      gint64 token;

      g_test_message ("planted: %s", kinds[i]);
      plant (f, script);
      token = first_users_token (f);
      g_assert_cmpint (token, >, last);
      g_assert_cmpint (token, <, 1000000000);
      last = token;
      plant (f, unplant);
    }
}

/* A part whose owner is not the user its name gives (fence.1, the
 * member's), as every other user's part is seen on NFS with root_squash
 * or all_squash, or where the names of users do not map (owned by
 * nobody): it counts, up to the bound and its slack (2^32), so a value
 * above the tokens given so far still raises the next token above it;
 * 2^63 - 2 there moves the tokens to the bound and its slack, no further.
 * Fails before: such a part was left out, and the token stays below it. */
static void
test_fence_part_of_another_owner (Fixture *f, gconstpointer data)
{
  g_autofree char *script = NULL;
  gint64 tokens[3], planted;

  init_group_pool (f);
  tokens[0] = first_users_token (f);
  planted = tokens[0] + 1000000;
  script = g_strdup_printf ("printf '%" G_GINT64_FORMAT "\\n' > \"$1/r/fence.1\"", planted);
  plant (f, script);
  tokens[1] = first_users_token (f);
  plant (f, "printf '9223372036854775806\\n' > \"$1/r/fence.2\"");
  tokens[2] = first_users_token (f);
  g_test_message ("tokens %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT " (planted %" G_GINT64_FORMAT "), %"
                  G_GINT64_FORMAT, tokens[0], tokens[1], planted, tokens[2]);
  g_assert_cmpint (tokens[1], >, planted);
  g_assert_cmpint (tokens[2], >, tokens[1]);
  g_assert_cmpint (tokens[2], <=, fence_bound_now () + (G_GINT64_CONSTANT (1) << 32) + 1);
}

/* As many names of the first user's parts as the library tries: fence.UID
 * and fence.UID.1 to fence.UID.15. */
#define FENCE_NAMES 16

/* A member plants the first user's own parts (fence.UID, fence.UID.now
 * and fence.UID.1 to .15, hers) before that user's first grant: the
 * sticky folder lets the first user replace none. Her run fails in one
 * line naming the planted fence.UID and its owner. Once the member has
 * removed fence.UID.2 to .15, the first user's grants succeed, writing her
 * parts as fence.UID.2, with tokens above every part counted: the planted
 * ones (up to the bound) and the member's own fence.MEMBER.3, read as
 * hers. The member's clean leaves the planted parts; root's clean removes
 * them (fence.UID.1 too), saying so, and leaves fence.UID.2 and
 * fence.MEMBER.3; the first user's tokens still rise. Fails before: the
 * grant fails while fence.UID is planted. */
static void
test_fence_own_name_taken (Fixture *f, gconstpointer data)
{
  const char *member = f->gp->users->users[1];
  guint first = test_uid_of (f->gp->users->users[0]);
  guint second = test_uid_of (member);
  g_autofree char *script = g_strdup_printf ("printf '1000000\\n' > \"$1/r/fence.%u\"; "
                                             "printf '1000000 x\\n' > \"$1/r/fence.%u.now\"; "
                                             "for i in $(seq 1 %d); do printf '2000000\\n' > \"$1/r/fence.%u.$i\"; done; "
                                             "printf '3000000\\n' > \"$1/r/fence.%u.3\"",
                                             first, first, FENCE_NAMES - 1, first, second);
  g_autofree char *unplant = g_strdup_printf ("for i in $(seq 2 %d); do rm \"$1/r/fence.%u.$i\"; done",
                                              FENCE_NAMES - 1, first);
  g_autofree char *name = g_strdup_printf ("fence.%u", first);
  g_autofree char *path = g_build_filename (f->gp->pool, "r", name, NULL);
  g_autofree char *now_path = g_strconcat (path, ".now", NULL);
  g_autofree char *first_path = g_strconcat (path, ".1", NULL);
  g_autofree char *second_path = g_strconcat (path, ".2", NULL);
  g_autofree char *members_name = g_strdup_printf ("fence.%u.3", second);
  g_autofree char *members_path = g_build_filename (f->gp->pool, "r", members_name, NULL);
  g_autofree char *out = NULL;
  struct stat st;
  gint64 token;

  init_group_pool (f);
  plant (f, script);
  g_assert_cmpint (tessera_by (f, f->gp->users->users[0], &out, TRUE, "run", "--no-wait", "--need", "r", "--",
                               "true", NULL), !=, 0);
  g_assert_nonnull (strstr (out, path));
  g_assert_nonnull (strstr (out, member));

  plant (f, unplant);
  token = first_users_token (f);
  g_assert_cmpint (token, >, 3000000);
  g_assert_cmpint (lstat (second_path, &st), ==, 0);
  g_assert_true (S_ISREG (st.st_mode));
  g_assert_cmpuint (st.st_uid, ==, first);
  g_assert_cmpint (first_users_token (f), >, token);

  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "clean", "r", NULL), ==, 0);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (first_path, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", "r", NULL), ==, 0);
  g_assert_nonnull (strstr (out, path));
  g_assert_nonnull (strstr (out, first_path));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (now_path, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (first_path, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (second_path, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (members_path, G_FILE_TEST_EXISTS));
  token = first_users_token (f);
  g_assert_cmpint (first_users_token (f), >, token);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  security_test_add ("/security/fence/huge-value", NULL, test_fence_huge_value);
  security_test_add ("/security/fence/unreadable-parts", NULL, test_fence_unreadable_parts);
  security_test_add ("/security/fence/own-name-taken", NULL, test_fence_own_name_taken);
  security_test_add ("/security/fence/clock-ahead", NULL, test_fence_clock_ahead);
  security_test_add ("/security/fence/clock-ahead-squashed", NULL, test_fence_clock_ahead_squashed);
  security_test_add ("/security/fence/root-name-planted", NULL, test_fence_root_name_planted);
  security_test_add ("/security/fence/part-of-another-owner", NULL, test_fence_part_of_another_owner);
  return g_test_run ();
}
