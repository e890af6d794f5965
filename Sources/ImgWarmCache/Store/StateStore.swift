import Crypto
import Foundation
import GRDB
import GRDBSQLite
#if canImport(Glibc)
import Glibc
#endif
import ImgWarmSupport

/// imgwarm's own state in `DIR/.imgwarm/state.sqlite`: the failed-URL list
/// (SDWebImageManager's `failedURLs`, made persistent) and the HTTP
/// validators used by `--refresh`. SQLite in WAL mode makes every commit
/// atomic, so a kill at any moment leaves the last committed state, and lets
/// two runs on one cache share it (writers wait for each other).
///
/// No secret at rest: the file and its `-wal`/`-shm` are 0600, and a URL or
/// key that could carry a credential or token (one with `@`, `?` or `#`:
/// userinfo, a query, a fragment) is stored only as its digest
/// (`storedForm`), next to its redacted text for `cache failed`. Lookups
/// digest the manifest's URL the same way, so the list still blocks and
/// unblocks it; but the list alone can no longer give the URL back: to
/// retry one, the manifest must still hold it. The rule looks only at those
/// three bytes, never at the `--redact-query` list, so runs with different
/// lists still find each other's rows.
public final class StateStore: Sendable {
    public struct FailedURL: Codable, FetchableRecord, PersistableRecord, Sendable {
        public static let databaseTableName = "failed_url"
        /// `storedForm` of the URL: the URL itself, or its digest.
        public var url: String
        /// The URL for display, secrets masked (`Redaction`); nil in rows
        /// written before the v2 schema that needed no masking.
        public var shownURL: String?
        /// The cache key for display, secrets masked.
        public var key: String
        public var errorClass: String
        public var status: Int?
        public var reason: String
        public var failedAt: Double
        enum CodingKeys: String, CodingKey {
            case url, shownURL = "shown_url", key, errorClass = "error_class", status, reason, failedAt = "failed_at"
        }
        /// A failure of `url` (the real URL; `apply` stores its digest when
        /// it must).
        public init(url: String, key: String, errorClass: String, status: Int?, reason: String, failedAt: Double) {
            self.url = url
            self.shownURL = nil
            self.key = key
            self.errorClass = errorClass
            self.status = status
            self.reason = reason
            self.failedAt = failedAt
        }

        /// The URL as `cache failed` shows it.
        public var displayURL: String { shownURL ?? url }
        /// Whether only the digest of the URL is kept.
        public var isDigest: Bool { url.hasPrefix(StateStore.digestPrefix) }
    }

    public struct Validators: Codable, FetchableRecord, PersistableRecord, Sendable, Equatable {
        public static let databaseTableName = "validator"
        /// The cache key (`validators(forKey:)` and `apply` turn it into
        /// its `storedForm`).
        public var key: String
        public var etag: String?
        public var lastModified: String?
        enum CodingKeys: String, CodingKey { case key, etag, lastModified = "last_modified" }
        public init(key: String, etag: String?, lastModified: String?) {
            self.key = key
            self.etag = etag
            self.lastModified = lastModified
        }
    }

    public let path: String
    private let queue: DatabaseQueue

    public static func databasePath(for cache: DiskCache) -> String {
        cache.stateDirectory + "/state.sqlite"
    }

    /// Opens (creating when missing) the state of `cache`.
    public convenience init(cache: DiskCache) throws {
        try self.init(path: Self.databasePath(for: cache))
    }

    public init(path: String) throws {
        self.path = path
        var config = Configuration()
        // Another run may hold the write lock for a moment; wait for it.
        config.busyMode = .timeout(30)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // A row rewritten or deleted (a URL's secrets of an older
            // schema, a cleared list) leaves no copy in free pages.
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        do {
            try Self.restrictMode(path)
            queue = try DatabaseQueue(path: path, configuration: config)
            try Self.enableWAL(queue)
            // A v1 database (whole URLs) is rewritten by v2. The old pages
            // stay in the main file until a checkpoint copies the new ones
            // over them, and a run that ends by exit() makes none: made here.
            let v1Rows = try queue.read { db in
                try db.tableExists("failed_url") && !Self.migrator.appliedIdentifiers(db).contains("v2")
            }
            try Self.migrate(queue)
            if v1Rows { _ = try? queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") } }
        } catch {
            throw ImgWarmError.cache(path: path, reason: "cannot open state database: \(error)")
        }
    }

    /// Runs that open a new state database at the same moment (two warms
    /// started together) all see "v1" as not applied; the writers then take
    /// turns, and the loser's INSERT into grdb_migrations fails with a
    /// UNIQUE constraint (it was exit 3). By then the winner has committed
    /// the same schema, so migrating again finds nothing to do. Found by
    /// ReliabilityTests/ConcurrencyTests.
    static func migrate(_ queue: DatabaseQueue) throws {
        var attempt = 0
        while true {
            do {
                try migrator.migrate(queue)
                return
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT && attempt < 5 {
                attempt += 1
                usleep(useconds_t(10_000 * attempt))
            }
        }
    }

    /// The database is created 0600 before SQLite opens it (SQLite creates
    /// files 0644 less the umask, and its `-wal` and `-shm` take the mode of
    /// the database file). Files of an older run, or made under another
    /// umask, are set to 0600 when this user owns them; another user's
    /// file is left as it is (SQLite then fails or works as its mode says).
    static func restrictMode(_ path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd >= 0 {
            close(fd)
        } else if errno != EACCES && errno != EROFS {
            // A symlink planted at the name (ELOOP) and the like. A file
            // this user may only read is left to SQLite, which opens it
            // read-only (`cache failed` on another user's cache).
            throw ImgWarmError.cache(path: path, reason: "cannot open state database: \(String(cString: strerror(errno)))")
        }
        for file in [path, path + "-wal", path + "-shm"] {
            let f = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard f >= 0 else { continue }
            var st = stat()
            if fstat(f, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == geteuid(), st.st_mode & 0o077 != 0 {
                _ = fchmod(f, st.st_mode & 0o700)
            }
            close(f)
        }
    }

    static let digestPrefix = "sha256:"

    /// What the database keeps of a URL or cache key: the text itself, or,
    /// when it holds `@`, `?` or `#` (where credentials, tokens and
    /// signatures live), `sha256:` and the hex SHA-256 of its UTF-8 bytes.
    /// A token's entropy keeps the digest from being reversed.
    public static func storedForm(_ text: String) -> String {
        guard Redaction.markBytes(text) != 0 else { return text }
        let digest = SHA256.hash(data: Array(text.utf8))
        return digestPrefix + Hex.encode(digest)
    }

    /// WAL is a property of the database file: the run that creates it sets
    /// it once. Switching needs an exclusive lock, and SQLite answers BUSY
    /// to a switch at once instead of calling the busy handler, so runs
    /// that start together on a new cache retry here for a while.
    private static func enableWAL(_ queue: DatabaseQueue) throws {
        let deadline = Date().addingTimeInterval(30)
        while true {
            do {
                // A filesystem without shared memory keeps the old mode:
                // still correct (rollback journal), only less concurrent.
                try queue.writeWithoutTransaction { db in
                    let current = try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? ""
                    if current.lowercased() != "wal" { try db.execute(sql: "PRAGMA journal_mode = WAL") }
                }
                return
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
                if Date() > deadline { throw error }
            }
            usleep(useconds_t.random(in: 5_000...25_000))
        }
    }

    /// The validator table since v3: the HTTP validators of a cache key
    /// (its `storedForm`), in one B-tree keyed by it.
    static func createValidatorTableSQL(name: String, ifNotExists: Bool) -> String {
        "CREATE TABLE \(ifNotExists ? "IF NOT EXISTS " : "")\(name) (key TEXT NOT NULL PRIMARY KEY, etag TEXT, last_modified TEXT) WITHOUT ROWID"
    }

    private static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.create(table: "failed_url", ifNotExists: true) { t in
                t.primaryKey("url", .text)
                t.column("key", .text).notNull()
                t.column("error_class", .text).notNull()
                t.column("status", .integer)
                t.column("reason", .text).notNull()
                t.column("failed_at", .double).notNull()
            }
            // A new database gets the validator table of v3 at once (v3
            // then finds nothing to do): rebuilding an empty table cost
            // every new cache about 2.5 million instructions (callgrind).
            try db.execute(sql: Self.createValidatorTableSQL(name: "validator", ifNotExists: true))
        }
        // v2: no secret at rest. Rows of v1 kept whole URLs and keys, with
        // their credentials and tokens: they become digests now, the text
        // for display redacted, so an older cache is cleaned on first open.
        m.registerMigration("v2") { db in
            // Idempotent, as v1 is: runs that open a new database together
            // may both get here (see `migrate`); the second then only fails
            // to record "v2" again, and retries.
            if try !db.columns(in: "failed_url").contains(where: { $0.name == "shown_url" }) {
                try db.alter(table: "failed_url") { t in t.add(column: "shown_url", .text) }
            }
            let rows = try Row.fetchAll(db, sql: "SELECT url, key, reason FROM failed_url")
            for row in rows {
                let url: String = row["url"], key: String = row["key"], reason: String = row["reason"]
                let stored = storedForm(url)
                guard stored != url || Redaction.url(key) != key || Redaction.inText(reason) != reason else { continue }
                try db.execute(sql: "UPDATE OR REPLACE failed_url SET url = ?, shown_url = ?, key = ?, reason = ? WHERE url = ?",
                               arguments: [stored, stored == url ? nil : Redaction.url(url), Redaction.url(key),
                                           Redaction.inText(reason), url])
            }
            for key in try String.fetchAll(db, sql: "SELECT key FROM validator") {
                let stored = storedForm(key)
                guard stored != key else { continue }
                try db.execute(sql: "UPDATE OR REPLACE validator SET key = ? WHERE key = ?", arguments: [stored, key])
            }
        }
        // v3: one B-tree for the validators. A rowid table with a TEXT
        // primary key keeps each key twice (the table and its automatic
        // index), and an upsert inserts into both; WITHOUT ROWID keeps the
        // rows in the key's own B-tree. The rows are carried over, so a
        // cache keeps its validators.
        m.registerMigration("v3") { db in
            // Idempotent, as v1 and v2 are (see `migrate`).
            let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'validator'") ?? ""
            guard !sql.uppercased().contains("WITHOUT ROWID") else { return }
            try db.execute(sql: createValidatorTableSQL(name: "validator_v3", ifNotExists: false))
            try db.execute(sql: """
                INSERT INTO validator_v3 (key, etag, last_modified) SELECT key, etag, last_modified FROM validator WHERE key IS NOT NULL;
                DROP TABLE validator;
                ALTER TABLE validator_v3 RENAME TO validator;
                """)
        }
        return m
    }

    /// The failed-URL count of a cache, without creating a database.
    public static func failedCountIfPresent(cache: DiskCache) -> Int {
        let p = databasePath(for: cache)
        guard FileManager.default.fileExists(atPath: p), let store = try? StateStore(path: p) else { return 0 }
        return (try? store.failedCount()) ?? 0
    }

    public func failedCount() throws -> Int {
        try queue.read { db in try FailedURL.fetchCount(db) }
    }

    /// Every failed URL, oldest first.
    public func failedURLs() throws -> [FailedURL] {
        try queue.read { db in try FailedURL.order(Column("failed_at")).fetchAll(db) }
    }

    /// The failed URLs in their `storedForm`, for checking a large
    /// manifest without a query per entry (`FailedURLSet.contains`).
    public func failedURLSet() throws -> FailedURLSet {
        // Rows that BlockRule no longer remembers (a TLS failure stored by
        // an earlier version) do not block.
        try queue.read { db in
            var stored = Set<String>(), stale = Set<String>()
            let rows = try Row.fetchCursor(db, sql: "SELECT url, error_class, status FROM failed_url")
            while let row = try rows.next() {
                let errorClass: String = row["error_class"] ?? ""
                let status: Int? = row["status"]
                if BlockRule.remembers(errorClass: errorClass, status: status) {
                    stored.insert(row["url"])
                } else {
                    stale.insert(row["url"])
                }
            }
            return FailedURLSet(stored: stored, stale: stale)
        }
    }

    public func isFailed(url: String) throws -> Bool {
        try queue.read { db in try FailedURL.exists(db, key: Self.storedForm(url)) }
    }

    @discardableResult
    public func clearFailed() throws -> Int {
        try queue.write { db in try FailedURL.deleteAll(db) }
    }

    public func validators(forKey key: String) throws -> Validators? {
        try queue.read { db in try Validators.fetchOne(db, key: Self.storedForm(key)) }.map {
            Validators(key: key, etag: $0.etag, lastModified: $0.lastModified)
        }
    }

    /// One change to the state; changes are applied in batches.
    public enum Change: Sendable {
        case failed(FailedURL)
        /// A success: the URL leaves the failed list (always asked for: the
        /// run's snapshot of the list can be stale, as another run sharing
        /// the cache may have added the URL since); validators are kept (or
        /// removed when the response had none).
        case succeeded(url: String, validators: Validators)
    }

    /// Validator rows written by one statement in `apply`. SQLite's fixed
    /// cost of running a statement (its start, the statement journal an
    /// upsert opens, the reset) is about half of a one-row upsert: 7,700
    /// instructions a row one at a time, 4,200 at 32 a statement, 4,100 at
    /// 64 (`bench/state-upsert.sh`, callgrind).
    static let validatorRowsPerStatement = 32

    /// An upsert of `rows` validator rows. A row that already holds the
    /// same validators (a re-run) is left as it is, not written again.
    static func upsertValidatorsSQL(rows: Int) -> String {
        """
        INSERT INTO validator (key, etag, last_modified) VALUES \(Array(repeating: "(?, ?, ?)", count: rows).joined(separator: ", "))
        ON CONFLICT(key) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified
          WHERE etag IS NOT excluded.etag OR last_modified IS NOT excluded.last_modified
        """
    }

    private static let upsertValidatorSQL = upsertValidatorsSQL(rows: 1)
    private static let upsertValidatorRowsSQL = upsertValidatorsSQL(rows: validatorRowsPerStatement)

    /// Applies changes in one transaction: all or nothing.
    public func apply(_ changes: [Change]) throws {
        guard !changes.isEmpty else { return }
        try queue.write { db in
            // Prepared once per connection, reused for every change.
            let upsertFailed = try db.cachedStatement(sql: """
                INSERT INTO failed_url (url, shown_url, key, error_class, status, reason, failed_at) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(url) DO UPDATE SET shown_url = excluded.shown_url, key = excluded.key, error_class = excluded.error_class,
                  status = excluded.status, reason = excluded.reason, failed_at = excluded.failed_at
                """)
            let deleteFailed = try db.cachedStatement(sql: "DELETE FROM failed_url WHERE url = ?")
            let upsertValidator = try db.cachedStatement(sql: Self.upsertValidatorSQL)
            // Prepared when the first rows fill it: parsing it costs about
            // 0.4 million instructions, which a run of a few files skips.
            var upsertValidatorRows: Statement?
            let deleteValidators = try db.cachedStatement(sql: "DELETE FROM validator WHERE key = ?")
            // A delete from an empty table changes nothing, and most caches
            // have no failed URL (and, from servers that send no ETag nor
            // Last-Modified, no validator): asked once, inside the
            // transaction (GRDB writes in IMMEDIATE transactions, so no
            // other run can add a row until the commit), and set again by
            // a write here.
            var failedListHasRows = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM failed_url)") ?? true
            var validatorTableHasRows = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM validator)") ?? true
            var parameters = StatementParameters()
            // Validator rows not yet written, fewer than a statement takes.
            // A delete of a key among them writes them first, so the
            // changes of one key keep their order (those of different keys
            // need none).
            var pending = StatementParameters()
            func writePending() throws {
                for row in stride(from: 0, to: pending.count, by: 3) {
                    try pending.run(upsertValidator, in: db, values: row..<(row + 3))
                }
                pending.removeAll()
            }
            for change in changes {
                switch change {
                case .failed(let f):
                    let stored = Self.storedForm(f.url)
                    parameters.removeAll()
                    parameters.append(text: stored)
                    parameters.append(text: stored == f.url ? nil : Redaction.url(f.url))
                    parameters.append(text: Redaction.url(f.key))
                    parameters.append(text: f.errorClass)
                    parameters.append(int: f.status)
                    parameters.append(text: f.reason)
                    parameters.append(double: f.failedAt)
                    try parameters.run(upsertFailed, in: db)
                    failedListHasRows = true
                case .succeeded(let url, let v):
                    if failedListHasRows {
                        parameters.removeAll()
                        parameters.append(text: Self.storedForm(url))
                        try parameters.run(deleteFailed, in: db)
                    }
                    let key = Self.storedForm(v.key)
                    if v.etag == nil && v.lastModified == nil {
                        if validatorTableHasRows {
                            if pending.containsText(key, every: 3) { try writePending() }
                            parameters.removeAll()
                            parameters.append(text: key)
                            try parameters.run(deleteValidators, in: db)
                        }
                    } else {
                        pending.append(text: key)
                        pending.append(text: v.etag)
                        pending.append(text: v.lastModified)
                        validatorTableHasRows = true
                        if pending.count == 3 * Self.validatorRowsPerStatement {
                            let statement = try upsertValidatorRows ?? db.cachedStatement(sql: Self.upsertValidatorRowsSQL)
                            upsertValidatorRows = statement
                            try pending.run(statement, in: db)
                            pending.removeAll()
                        }
                    }
                }
            }
            try writePending()
        }
    }
}

/// The values bound to one statement's parameters, through SQLite's C
/// API, their texts kept in one buffer that SQLite reads in place while the
/// statement runs (`SQLITE_STATIC`): no copy and no allocation per text, as
/// `SQLITE_TRANSIENT` makes. Why not `Statement.execute(arguments:)`: GRDB
/// wraps every value in a `DatabaseValue`, validates the arguments and
/// notifies its observers per call, and on a run that downloads 20,000
/// files with validators that came to about 10,000 instructions per
/// statement, more than SQLite's own step (callgrind). These statements
/// have no observers and run inside `queue.write`, whose transaction an
/// error thrown here rolls back.
struct StatementParameters {
    private enum Value {
        case text(start: Int, count: Int)
        case int(Int64)
        case double(Double)
        case null
    }

    /// Never empty once a text is added: SQLite binds NULL for a null
    /// pointer, and an empty text must stay an empty text.
    private var bytes: [UInt8] = []
    private var values: [Value] = []

    var count: Int { values.count }

    mutating func append(text: String?) {
        guard let text else { return values.append(.null) }
        if bytes.isEmpty { bytes.append(0) }
        let start = bytes.count
        bytes.append(contentsOf: text.utf8)
        values.append(.text(start: start, count: bytes.count - start))
    }

    mutating func append(int: Int?) {
        values.append(int.map { .int(Int64($0)) } ?? .null)
    }

    mutating func append(double: Double) {
        values.append(.double(double))
    }

    /// Whether `text` is one of the values at 0, `step`, 2 × `step`, ...
    func containsText(_ text: String, every step: Int) -> Bool {
        var text = text
        return text.withUTF8 { wanted in
            bytes.withUnsafeBufferPointer { buffer in
                stride(from: 0, to: values.count, by: step).contains { i in
                    guard case .text(let start, let count) = values[i], count == wanted.count else { return false }
                    return UnsafeBufferPointer(rebasing: buffer[start..<(start + count)]).elementsEqual(wanted)
                }
            }
        }
    }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
    }

    /// Runs `statement` once with `values` (all of them by default) bound
    /// to its parameters, in order.
    func run(_ statement: Statement, in db: Database, values range: Range<Int>? = nil) throws {
        let s = statement.sqliteStatement
        let rc: Int32 = bytes.withUnsafeBufferPointer { buffer in
            var rc = SQLITE_OK
            var index: Int32 = 1
            for value in values[range ?? values.indices] where rc == SQLITE_OK {
                switch value {
                case .text(let start, let count):
                    // A text is in `bytes`, so `buffer` is never empty here.
                    guard let base = buffer.baseAddress else { rc = SQLITE_MISUSE; break }
                    let text = UnsafeRawPointer(base + start).assumingMemoryBound(to: CChar.self)
                    // nil destructor: SQLITE_STATIC, read in place until the reset below.
                    rc = sqlite3_bind_text64(s, index, text, UInt64(count), nil, UInt8(SQLITE_UTF8))
                case .int(let int): rc = sqlite3_bind_int64(s, index, int)
                case .double(let double): rc = sqlite3_bind_double(s, index, double)
                case .null: rc = sqlite3_bind_null(s, index)
                }
                index += 1
            }
            if rc == SQLITE_OK {
                rc = sqlite3_step(s)
                if rc == SQLITE_DONE { rc = SQLITE_OK }
            }
            // Releases the statement's hold on the database either way,
            // and its pointers into `bytes` before they go.
            sqlite3_reset(s)
            sqlite3_clear_bindings(s)
            return rc
        }
        if rc != SQLITE_OK {
            throw DatabaseError(resultCode: ResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
                                sql: statement.sql)
        }
    }
}

/// The failed-URL list of a run's start, in stored form: asks with the
/// real URL, digested the same way the rows were.
public struct FailedURLSet: Sendable, Equatable, ExpressibleByArrayLiteral {
    let stored: Set<String>
    /// Rows that no longer block (BlockRule): a success still removes them.
    let stale: Set<String>
    public init(stored: Set<String> = []) {
        self.stored = stored
        self.stale = []
    }
    public init(stored: Set<String>, stale: Set<String>) {
        self.stored = stored
        self.stale = stale
    }
    /// The set of these real URLs (tests).
    public init(arrayLiteral urls: String...) {
        stored = Set(urls.map(StateStore.storedForm))
        stale = []
    }
    public var isEmpty: Bool { stored.isEmpty }
    public var count: Int { stored.count }
    /// The URL blocks: its failure is one BlockRule remembers.
    public func contains(_ url: String) -> Bool { !stored.isEmpty && stored.contains(StateStore.storedForm(url)) }
    /// The URL has a row at all, blocking or not.
    public func isListed(_ url: String) -> Bool {
        contains(url) || (!stale.isEmpty && stale.contains(StateStore.storedForm(url)))
    }
}
