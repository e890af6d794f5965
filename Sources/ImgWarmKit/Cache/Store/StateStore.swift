import Foundation
import GRDB
import GRDBSQLite

/// imgwarm's own state in `DIR/.imgwarm/state.sqlite`: the failed-URL list
/// (SDWebImageManager's `failedURLs`, made persistent) and the HTTP
/// validators used by `--refresh`. SQLite in WAL mode makes every commit
/// atomic, so a kill at any moment leaves the last committed state, and lets
/// two runs on one cache share it (writers wait for each other).
public final class StateStore: @unchecked Sendable {
    public struct FailedURL: Codable, FetchableRecord, PersistableRecord, Sendable {
        public static let databaseTableName = "failed_url"
        public var url: String
        public var key: String
        public var errorClass: String
        public var status: Int?
        public var reason: String
        public var failedAt: Double
        enum CodingKeys: String, CodingKey {
            case url, key, errorClass = "error_class", status, reason, failedAt = "failed_at"
        }
        public init(url: String, key: String, errorClass: String, status: Int?, reason: String, failedAt: Double) {
            self.url = url
            self.key = key
            self.errorClass = errorClass
            self.status = status
            self.reason = reason
            self.failedAt = failedAt
        }
    }

    public struct Validators: Codable, FetchableRecord, PersistableRecord, Sendable, Equatable {
        public static let databaseTableName = "validator"
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
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: config)
            try Self.enableWAL(queue)
            try Self.migrate(queue)
        } catch {
            throw CacheError(path: path, reason: "cannot open state database: \(error)")
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
            try db.create(table: "validator", ifNotExists: true) { t in
                t.primaryKey("key", .text)
                t.column("etag", .text)
                t.column("last_modified", .text)
            }
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

    /// The set of failed URLs, for checking a large manifest without a
    /// query per entry.
    public func failedURLSet() throws -> Set<String> {
        try queue.read { db in Set(try String.fetchAll(db, sql: "SELECT url FROM failed_url")) }
    }

    public func isFailed(url: String) throws -> Bool {
        try queue.read { db in try FailedURL.exists(db, key: url) }
    }

    @discardableResult
    public func clearFailed() throws -> Int {
        try queue.write { db in try FailedURL.deleteAll(db) }
    }

    public func validators(forKey key: String) throws -> Validators? {
        try queue.read { db in try Validators.fetchOne(db, key: key) }
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

    /// Applies changes in one transaction: all or nothing.
    public func apply(_ changes: [Change]) throws {
        guard !changes.isEmpty else { return }
        try queue.write { db in
            // Prepared once per transaction batch, reused for every change.
            let upsertFailed = try db.cachedStatement(sql: """
                INSERT INTO failed_url (url, key, error_class, status, reason, failed_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(url) DO UPDATE SET key = excluded.key, error_class = excluded.error_class,
                  status = excluded.status, reason = excluded.reason, failed_at = excluded.failed_at
                """)
            let deleteFailed = try db.cachedStatement(sql: "DELETE FROM failed_url WHERE url = ?")
            let upsertValidators = try db.cachedStatement(sql: """
                INSERT INTO validator (key, etag, last_modified) VALUES (?, ?, ?)
                ON CONFLICT(key) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified
                """)
            let deleteValidators = try db.cachedStatement(sql: "DELETE FROM validator WHERE key = ?")
            // A delete from an empty failed list changes nothing, and most
            // caches have none: asked once, inside the transaction (GRDB
            // writes in IMMEDIATE transactions, so no other run can add a
            // row until the commit), and set again by a failure here.
            var failedListHasRows = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM failed_url)") ?? true
            for change in changes {
                switch change {
                case .failed(let f):
                    try Self.run(upsertFailed, in: db, .text(f.url), .text(f.key), .text(f.errorClass),
                                 .int(f.status), .text(f.reason), .double(f.failedAt))
                    failedListHasRows = true
                case .succeeded(let url, let v):
                    if failedListHasRows { try Self.run(deleteFailed, in: db, .text(url)) }
                    if v.etag == nil && v.lastModified == nil {
                        try Self.run(deleteValidators, in: db, .text(v.key))
                    } else {
                        try Self.run(upsertValidators, in: db, .text(v.key), .text(v.etag), .text(v.lastModified))
                    }
                }
            }
        }
    }

    /// A value bound to a statement parameter.
    enum Value {
        case text(String?)
        case int(Int?)
        case double(Double)
    }

    /// Runs one of `apply`'s statements with `values` bound through
    /// SQLite's C API. Why not `Statement.execute(arguments:)`: GRDB wraps
    /// every value in a `DatabaseValue`, validates the arguments and
    /// notifies its observers per call, and on a run that downloads 20,000
    /// files with validators that came to about 10,000 instructions per
    /// statement, more than SQLite's own step (callgrind). These statements
    /// have no observers and run inside `queue.write`, whose transaction
    /// an error thrown here rolls back.
    static func run(_ statement: Statement, in db: Database, _ values: Value...) throws {
        let s = statement.sqliteStatement
        sqlite3_reset(s)
        var rc = SQLITE_OK
        for (i, value) in values.enumerated() where rc == SQLITE_OK {
            let index = Int32(i + 1)
            switch value {
            case .text(let text?): rc = sqlite3_bind_text(s, index, text, -1, sqliteTransient)
            case .int(let int?): rc = sqlite3_bind_int64(s, index, Int64(int))
            case .double(let double): rc = sqlite3_bind_double(s, index, double)
            case .text(nil), .int(nil): rc = sqlite3_bind_null(s, index)
            }
        }
        if rc == SQLITE_OK {
            rc = sqlite3_step(s)
            if rc == SQLITE_DONE { rc = SQLITE_OK }
        }
        let message = rc == SQLITE_OK ? nil : String(cString: sqlite3_errmsg(db.sqliteConnection))
        // Releases the statement's hold on the database either way.
        sqlite3_reset(s)
        sqlite3_clear_bindings(s)
        if let message {
            throw DatabaseError(resultCode: ResultCode(rawValue: rc), message: message, sql: statement.sql)
        }
    }

    /// SQLite copies the text before `sqlite3_bind_text` returns.
    private static let sqliteTransient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}
