/* tessera-audit.c: the audit log's lines (who did what to a pool, when)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-audit-private.h"
#include "tessera-dynamic-lock-file-private.h"
#include "tessera-folder-io-private.h"
#include "tessera-folder-path-private.h"
#include "tessera-host-private.h"
#include "tessera-pause-point-private.h"

#include <pwd.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The lines are for machines (log collectors, grep): English key=value
 * pairs, never translated. A value is written as it is unless it is empty
 * or holds a blank, a control byte, a backslash or begins with a quote:
 * then it is quoted, with C escapes (g_strescape(): a hostile name can
 * neither end the line nor forge a field). */
static void
append_pair (GString *line, GArray *fields, GPtrArray *keep, const char *key, const char *value)
{
  gboolean quote = *value == '\0' || *value == '"';
  GLogField field;
  char *name;

  for (const char *p = value; !quote && *p != '\0'; p++)
    quote = (guchar) *p <= ' ' || *p == '\\' || (guchar) *p == 0x7f;
  if (line->len > 0)
    g_string_append_c (line, ' ');
  g_string_append_printf (line, "%s=", key);
  if (quote)
    {
      g_autofree char *escaped = g_strescape (value, NULL);
      g_string_append_printf (line, "\"%s\"", escaped);
    }
  else
    g_string_append (line, value);
  name = g_ascii_strup (key, -1);
  g_ptr_array_add (keep, g_strconcat ("TESSERA_", name, NULL));
  g_free (name);
  field.key = g_ptr_array_index (keep, keep->len - 1);
  field.value = value;
  field.length = -1;
  g_array_append_val (fields, field);
}

void
_tessera_audit_log (const char             *event,
                    const char             *resource,
                    const char             *name,
                    TesseraDynamicLockFile *lock_file,
                    ...)
{
  g_autoptr(GString) line = g_string_new (NULL);
  g_autoptr(GArray) fields = g_array_new (FALSE, FALSE, sizeof (GLogField));
  g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func (g_free);   /* field names and values */
  g_autofree char *user = _tessera_dup_user_name (geteuid ());
  g_autofree char *uid = g_strdup_printf ("%u", (unsigned) geteuid ());
  g_autofree char *pid = g_strdup_printf ("%d", (int) getpid ());
  const GLogField fixed[] = {
    { "GLIB_DOMAIN", TESSERA_AUDIT_LOG_DOMAIN, -1 },
    { "PRIORITY", "6", -1 },
  };
  GLogField message;
  va_list ap;

  append_pair (line, fields, keep, "event", event);
  append_pair (line, fields, keep, "resource", resource);
  append_pair (line, fields, keep, "user", user);
  append_pair (line, fields, keep, "uid", uid);
  append_pair (line, fields, keep, "host", _tessera_host_name ());
  append_pair (line, fields, keep, "pid", pid);
  if (lock_file != NULL && name == NULL)
    name = tessera_dynamic_lock_file_get_path (lock_file);
  if (name != NULL)
    {
      char *base = g_path_get_basename (name);

      if (g_str_has_suffix (base, TESSERA_LOCK_FILE_SUFFIX))
        base[strlen (base) - strlen (TESSERA_LOCK_FILE_SUFFIX)] = '\0';
      g_ptr_array_add (keep, base);
      append_pair (line, fields, keep, "job", base);
    }
  if (lock_file != NULL)
    {
      TesseraProcess *process = tessera_dynamic_lock_file_get_process (lock_file);
      JsonNode *information = tessera_dynamic_lock_file_get_information (lock_file);
      const char *job_uri = tessera_dynamic_lock_file_get_job_uri (lock_file);
      char *text;

      gint64 claimed = process != NULL ? tessera_process_get_uid (process) : -1;
      gint64 owner = tessera_dynamic_lock_file_get_file_uid (lock_file);

      /* Whose it is: its file's owner, as status says (the uid its spec
       * records is anyone's claim: a member may write another's uid in a
       * file of hers); the claim apart when it differs. Without a file
       * (etcd), the claim. */
      if (owner < 0)
        owner = claimed;
      if (owner >= 0)
        {
          text = _tessera_dup_user_name ((uid_t) owner);
          g_ptr_array_add (keep, text);
          append_pair (line, fields, keep, "owner", text);
        }
      if (claimed >= 0 && claimed != owner)
        {
          text = g_strdup_printf ("%" G_GINT64_FORMAT, claimed);
          g_ptr_array_add (keep, text);
          append_pair (line, fields, keep, "claimed_uid", text);
        }
      text = information != NULL ? json_to_string (information, FALSE) : g_strdup ("null");
      g_ptr_array_add (keep, text);
      append_pair (line, fields, keep, "amount", text);
      if (process != NULL && tessera_process_get_batch_job_id (process) != NULL)
        append_pair (line, fields, keep, "batch_job", tessera_process_get_batch_job_id (process));
      if (process != NULL && tessera_process_get_command_line (process) != NULL)
        {
          text = g_strjoinv (" ", (char **) tessera_process_get_command_line (process));
          g_ptr_array_add (keep, text);
          append_pair (line, fields, keep, "command", text);
        }
      if (job_uri != NULL)
        append_pair (line, fields, keep, "job_uri", job_uri);
    }
  va_start (ap, lock_file);
  for (const char *key = va_arg (ap, const char *); key != NULL; key = va_arg (ap, const char *))
    {
      const char *value = va_arg (ap, const char *);

      if (value != NULL)
        append_pair (line, fields, keep, key, value);
    }
  va_end (ap);
  g_array_append_vals (fields, fixed, G_N_ELEMENTS (fixed));
  message.key = "MESSAGE";
  message.value = line->str;
  message.length = -1;
  g_array_append_val (fields, message);
  _tessera_pause_point ("audit-write");
  g_log_structured_array (G_LOG_LEVEL_INFO, (const GLogField *) fields->data, fields->len);
}

gboolean
_tessera_audit_pool_is_shared (const char *lock_folder)
{
  g_autofree char *parent = NULL;
  struct stat st;
  int fd;

  if (lock_folder == NULL)
    return TRUE;
  parent = g_path_get_dirname (lock_folder);
  if ((fd = _tessera_open_folder_path (parent, FALSE, NULL)) >= 0)
    {
      gboolean group = fstat (fd, &st) == 0 && _tessera_folder_sharing_of (&st) >= TESSERA_FOLDER_SHARING_GROUP;

      close (fd);
      if (group)
        return TRUE;
    }
  if ((fd = _tessera_open_folder_path (lock_folder, FALSE, NULL)) >= 0)
    {
      gboolean group = fstat (fd, &st) == 0 && (st.st_mode & S_ISGID) &&
                       _tessera_folder_sharing_of (&st) >= TESSERA_FOLDER_SHARING_GROUP;

      close (fd);
      return group;
    }
  return FALSE;
}

gboolean
_tessera_audit_may_switch_off (const char *lock_folder)
{
  struct stat st;
  gboolean own;
  int fd;

  if (geteuid () == 0)
    return TRUE;
  /* A pool elsewhere (etcd) has no folder whose owner decides: only root
   * switches its audit off (anyone with the cluster's credentials could
   * have written a configuration saying off). */
  if (lock_folder == NULL)
    return FALSE;
  if ((fd = _tessera_open_folder_path (lock_folder, FALSE, NULL)) < 0)
    return FALSE;
  own = fstat (fd, &st) == 0 && st.st_uid == geteuid ();
  close (fd);
  return own;
}
