/* tessera-lock-file-stand-in.c: counting lock files without building them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-dynamic-lock-file-private.h"
#include "tessera-folder-io-private.h"
#include "tessera-lock-file-stand-in-private.h"

#include <string.h>

struct _TesseraStandIns
{
  GType lock_file_type;
  char *jobs_path;
  GHashTable *table;   /* summary → lock file, or NULL: it makes none */
  /* The last one asked for, its key in table: the holders of a pool
   * mostly share one information, and comparing costs less than hashing. */
  const char *last_summary;
  TesseraDynamicLockFile *last;
};

static void
unref_nullable (gpointer object)
{
  if (object != NULL)
    g_object_unref (object);
}

TesseraStandIns *
_tessera_stand_ins_new (GType lock_file_type, const char *jobs_path)
{
  TesseraStandIns *stand_ins = g_new0 (TesseraStandIns, 1);

  stand_ins->lock_file_type = lock_file_type;
  stand_ins->jobs_path = g_strdup (jobs_path);
  stand_ins->table = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, unref_nullable);
  return stand_ins;
}

void
_tessera_stand_ins_free (TesseraStandIns *stand_ins)
{
  if (stand_ins == NULL)
    return;
  g_hash_table_unref (stand_ins->table);
  g_free (stand_ins->jobs_path);
  g_free (stand_ins);
}

/* (transfer none) (nullable): a valid lock file of the type with the
 * information @summary and no holder, made once; NULL when @summary does
 * not make one (the lock file is then built from its text). */
static TesseraDynamicLockFile *
stand_ins_get (TesseraStandIns *stand_ins, const char *summary)
{
  g_autofree char *text = NULL;
  TesseraDynamicLockFile *stand_in;
  gpointer key, found;

  if (stand_ins->last_summary != NULL && strcmp (stand_ins->last_summary, summary) == 0)
    return stand_ins->last;
  if (g_hash_table_lookup_extended (stand_ins->table, summary, &key, &found))
    {
      stand_ins->last_summary = key;
      stand_ins->last = found;
      return found;
    }
  /* An empty job_uri: valid (it counts), and names no job to judge. */
  text = g_strdup_printf ("{\"job_uri\": \"\", \"information\": %s}", summary);
  stand_in = tessera_dynamic_lock_file_new_from_data (stand_ins->lock_file_type, stand_ins->jobs_path, text, -1, NULL);
  /* A summary that is not one JSON value could make one that does not. */
  if (stand_in != NULL && !tessera_dynamic_lock_file_is_valid (stand_in))
    g_clear_object (&stand_in);
  g_hash_table_insert (stand_ins->table, g_strdup (summary), stand_in);
  return stand_in;
}

char *
_tessera_lock_file_summarize (TesseraDynamicLockFile *lock_file)
{
  JsonNode *information = tessera_dynamic_lock_file_get_information (lock_file);

  if (!tessera_dynamic_lock_file_is_valid (lock_file))
    return NULL;
  /* json-glib writes numbers back as read (1.0 stays a double). */
  return information != NULL ? json_to_string (information, FALSE) : g_strdup ("null");
}

gboolean
_tessera_recorded_init (TesseraRecorded   *recorded,
                        TesseraStandIns   *stand_ins,
                        const char        *summary,
                        const char        *text,
                        gsize              length,
                        const struct stat *st)
{
  TesseraDynamicLockFile *stand_in;

  if (length > G_MAXUINT32)
    return FALSE;
  stand_in = stand_ins_get (stand_ins, summary);
  if (stand_in == NULL)
    return FALSE;
  /* Not a reference: the table keeps each stand-in for as long as the
   * stand-ins last, and a reference taken and dropped for each of
   * thousands of holders costs more than counting them. */
  recorded->stand_in = stand_in;
  recorded->text = text;
  recorded->length = (guint32) length;
  recorded->mtime_ns = _tessera_stat_mtime_ns (st);
  recorded->uid = st->st_uid;
  return TRUE;
}

TesseraDynamicLockFile *
_tessera_recorded_build (TesseraRecorded *recorded,
                         GType            lock_file_type,
                         const char      *path,
                         GError         **error)
{
  g_autofree char *text = g_memdup2 (recorded->text, recorded->length);
  struct stat st = { 0 };

  st.st_mtim.tv_sec = recorded->mtime_ns / G_GINT64_CONSTANT (1000000000);
  st.st_mtim.tv_nsec = recorded->mtime_ns % G_GINT64_CONSTANT (1000000000);
  st.st_uid = recorded->uid;
  return _tessera_dynamic_lock_file_new_from_text (lock_file_type, path, text, recorded->length, &st, error);
}
