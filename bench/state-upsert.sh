#!/usr/bin/env bash
# The state database's validator write, alone: callgrind instructions per
# upsert into a new table on tmpfs, for the table layouts and ways of
# writing that docs/performance.md ("Per file") compares. The database is
# set up as StateStore does (WAL, synchronous NORMAL, secure_delete) and
# written in transactions of 2,000 rows (one a second at 2,000 files a
# second).
#   bench/state-upsert.sh [N]        (N upserts a case, 20,000 by default)
# Prints, per case, the instructions of an upsert on a new table and on a
# re-run (the same N rows again, the same values), the keys in order
# (`…/t000001.jpg`, `…/t000002.jpg`, ...) and shuffled. A case is
#   table:      rowid   key TEXT PRIMARY KEY (a rowid table and its index: v2)
#               norowid key TEXT PRIMARY KEY ... WITHOUT ROWID (v3)
#               hash    id INTEGER PRIMARY KEY = 64-bit FNV-1a of the key,
#                       the key in a column
#   rows:       rows per INSERT statement (VALUES (?,?,?), (?,?,?), ...)
#   skip:       1 = ON CONFLICT ... DO UPDATE ... WHERE the values differ
#   bind:       copy = SQLITE_TRANSIENT, inplace = SQLITE_STATIC
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "state-upsert: needs valgrind" >&2; exit 2; }
n="${1:-20000}"
dir="$(mktemp -d /dev/shm/state-upsert.XXXXXX 2>/dev/null || mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cat > "$dir/upsert.c" <<'C'
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static sqlite3 *db;
static void ex(const char *sql) {
    char *e = 0;
    if (sqlite3_exec(db, sql, 0, 0, &e) != SQLITE_OK) { fprintf(stderr, "%s: %s\n", sql, e); exit(1); }
}
static sqlite3_stmt *prep(const char *sql) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, 0) != SQLITE_OK) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); exit(1); }
    return s;
}
static uint64_t fnv1a(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ULL; }
    return h;
}
/* upsert PATH TABLE ROWS SKIP BIND SHUFFLE N ROUNDS; TABLE "none" formats the rows only. */
int main(int argc, char **argv) {
    if (argc != 9) return 2;
    const char *path = argv[1], *table = argv[2];
    int rows = atoi(argv[3]), skip = atoi(argv[4]), inplace = !strcmp(argv[5], "inplace"), shuffle = atoi(argv[6]);
    int n = atoi(argv[7]), rounds = atoi(argv[8]), batch = 2000, hashed = !strcmp(table, "hash");
    if (sqlite3_open(path, &db) != SQLITE_OK) return 1;
    ex("PRAGMA synchronous = NORMAL"); ex("PRAGMA secure_delete = ON"); ex("PRAGMA journal_mode = WAL");
    if (hashed) ex("CREATE TABLE validator (id INTEGER PRIMARY KEY, key TEXT NOT NULL, etag TEXT, last_modified TEXT)");
    else if (!strcmp(table, "norowid")) ex("CREATE TABLE validator (key TEXT NOT NULL PRIMARY KEY, etag TEXT, last_modified TEXT) WITHOUT ROWID");
    else ex("CREATE TABLE validator (key TEXT PRIMARY KEY, etag TEXT, last_modified TEXT)");
    sqlite3_stmt *one = 0, *many = 0;
    if (strcmp(table, "none")) {
        for (int k = 0; k < 2; k++) {
            int r = k ? rows : 1;
            char *sql = malloc(512 + 32 * (size_t)r), *o = sql;
            o += sprintf(o, "INSERT INTO validator (%skey, etag, last_modified) VALUES ", hashed ? "id, " : "");
            for (int i = 0; i < r; i++) o += sprintf(o, "%s%s", i ? ", " : "", hashed ? "(?, ?, ?, ?)" : "(?, ?, ?)");
            o += sprintf(o, " ON CONFLICT(%s) DO UPDATE SET %setag = excluded.etag, last_modified = excluded.last_modified",
                         hashed ? "id" : "key", hashed ? "key = excluded.key, " : "");
            if (skip) sprintf(o, " WHERE %setag IS NOT excluded.etag OR last_modified IS NOT excluded.last_modified",
                              hashed ? "key IS NOT excluded.key OR " : "");
            if (k) many = prep(sql); else one = prep(sql);
            free(sql);
        }
    }
    static char text[2000 * 4][64];   /* a statement's texts stay until its step */
    for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < n;) {
            ex("BEGIN IMMEDIATE");
            int end = i + batch < n ? i + batch : n;
            while (i < end) {
                int r = end - i >= rows ? rows : 1, col = 1;
                sqlite3_stmt *s = r > 1 ? many : one;
                for (int j = 0; j < r; j++, i++) {
                    int k = shuffle ? (int)((i * 7919L) % n) : i;
                    char *key = text[4 * j], *etag = text[4 * j + 1], *lm = text[4 * j + 2];
                    snprintf(key, 64, "http://127.0.0.1:8080/thumbs/%03d/t%06d.jpg", k / 1000, k);
                    snprintf(etag, 64, "\"6b096796-%x\"", 0x3000 + k);
                    snprintf(lm, 64, "Fri, 27 Nov 2026 11:20:54 GMT");
                    if (!s) { if (fnv1a(key) == 42) puts(key); continue; }
                    if (hashed) sqlite3_bind_int64(s, col++, (sqlite3_int64)fnv1a(key));
                    const char *t[3] = {key, etag, lm};
                    for (int c = 0; c < 3; c++) sqlite3_bind_text(s, col++, t[c], -1, inplace ? SQLITE_STATIC : SQLITE_TRANSIENT);
                }
                if (!s) continue;
                if (sqlite3_step(s) != SQLITE_DONE) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 1; }
                sqlite3_reset(s);
                sqlite3_clear_bindings(s);
            }
            ex("COMMIT");
        }
    }
    return 0;
}
C
cc -O2 -o "$dir/upsert" "$dir/upsert.c" -lsqlite3
count() {   # count TABLE ROWS SKIP BIND SHUFFLE ROUNDS: instructions of the whole process
  rm -f "$dir/db" "$dir/db-wal" "$dir/db-shm"
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$dir/upsert" "$dir/db" "$1" "$2" "$3" "$4" "$5" "$n" "$6" 2>&1 \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
declare -A base
for shuffle in 0 1; do for rounds in 1 2; do base[$shuffle$rounds]=$(count none 1 0 copy $shuffle $rounds); done; done
printf '%-8s %4s %4s %-7s | %9s %9s | %9s %9s\n' table rows skip bind "new" "re-run" "new shuf" "re-run shuf"
for c in "rowid 1 0 copy" "rowid 1 1 copy" "norowid 1 0 copy" "norowid 1 1 copy" "hash 1 0 copy" "hash 1 1 copy" \
         "norowid 1 1 inplace" "rowid 32 1 inplace" "hash 32 1 inplace" "norowid 8 1 inplace" "norowid 32 1 inplace" "norowid 64 1 inplace"; do
  set -- $c
  line=$(printf '%-8s %4s %4s %-7s |' "$1" "$2" "$3" "$4")
  for shuffle in 0 1; do
    base1=${base[${shuffle}1]} base2=${base[${shuffle}2]}
    one=$(count "$1" "$2" "$3" "$4" "$shuffle" 1); two=$(count "$1" "$2" "$3" "$4" "$shuffle" 2)
    line+=$(printf ' %9d %9d |' $(( (one - base1) / n )) $(( (two - base2 - one + base1) / n )))
  done
  echo "$line"
done
