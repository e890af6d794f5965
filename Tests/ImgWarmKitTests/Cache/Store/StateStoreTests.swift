import Foundation
import GRDB
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

@Suite struct StateStoreTests {
    /// Runs `body` with a prepared cache in a new folder, removed after.
    func withPreparedCache(_ body: (DiskCache) throws -> Void) throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = DiskCache(directory: dir)
        try cache.prepare()
        try body(cache)
    }

    @Test func failedListAndValidatorsPersist() throws {
        try withPreparedCache { cache in
            do {
                let s = try StateStore(cache: cache)
                try s.apply([
                    .failed(.init(url: "https://e/a", key: "https://e/a", errorClass: "bad-image", status: 200, reason: "truncated", failedAt: 1)),
                    .failed(.init(url: "https://e/b", key: "https://e/b", errorClass: "http-status", status: 404, reason: "404", failedAt: 2)),
                    .succeeded(url: "https://e/c", validators: .init(key: "https://e/c", etag: "\"v1\"", lastModified: nil)),
                ])
            }
            let s = try StateStore(cache: cache)
            #expect(try s.failedURLSet() == ["https://e/a", "https://e/b"])
            #expect(try s.validators(forKey: "https://e/c") == .init(key: "https://e/c", etag: "\"v1\"", lastModified: nil))
            // A later success removes the URL from the list.
            try s.apply([.succeeded(url: "https://e/a", validators: .init(key: "https://e/a", etag: nil, lastModified: nil))])
            #expect(try s.failedURLs().map(\.url) == ["https://e/b"])
            #expect(StateStore.failedCountIfPresent(cache: cache) == 1)
            #expect(try s.clearFailed() == 1)
        }
    }

    /// Every field of a failed entry round-trips through the C bindings
    /// (`StatementParameters`): text, an absent and a present status, a double.
    @Test func failedEntriesKeepEveryField() throws {
        try withPreparedCache { cache in
            let s = try StateStore(cache: cache)
            let a = StateStore.FailedURL(url: "https://e/ä?q=1", key: "k-ä", errorClass: "network", status: nil,
                                         reason: "connection refused", failedAt: 1.5)
            let b = StateStore.FailedURL(url: "https://e/b", key: "https://e/b", errorClass: "http-status", status: 404,
                                         reason: "404 Not Found", failedAt: 2.25)
            try s.apply([.failed(a), .failed(b)])
            let rows = try s.failedURLs()
            // A URL with a query is kept as a digest, shown redacted.
            #expect(rows.map(\.displayURL) == [a.url, b.url])
            #expect(rows.map(\.isDigest) == [true, false])
            #expect(rows.map(\.key) == [a.key, b.key])
            #expect(rows.map(\.errorClass) == [a.errorClass, b.errorClass])
            #expect(rows.map(\.status) == [nil, 404])
            #expect(rows.map(\.reason) == [a.reason, b.reason])
            #expect(rows.map(\.failedAt) == [1.5, 2.25])
            // An upsert replaces the row; validators with only one of the two.
            try s.apply([.failed(.init(url: b.url, key: b.key, errorClass: "timeout", status: nil, reason: "slow", failedAt: 3)),
                         .succeeded(url: "https://e/c", validators: .init(key: "kc", etag: nil, lastModified: "Sun, 22 Nov 2026 22:29:08 GMT"))])
            #expect(try s.failedURLs().last?.errorClass == "timeout")
            #expect(try s.failedURLs().last?.status == nil)
            #expect(try s.validators(forKey: "kc") == .init(key: "kc", etag: nil, lastModified: "Sun, 22 Nov 2026 22:29:08 GMT"))
            // A success without validators removes the stored ones.
            try s.apply([.succeeded(url: "https://e/c", validators: .init(key: "kc", etag: nil, lastModified: nil))])
            #expect(try s.validators(forKey: "kc") == nil)
        }
    }

    /// A success clears its URL from the failed list however the list got
    /// it: earlier in the same batch (the list was empty when the batch
    /// began), or from another run after this one opened the state.
    @Test func successClearsFailuresAddedInTheBatchOrByAnotherRun() throws {
        try withPreparedCache { cache in
            let run = try StateStore(cache: cache)
            let other = try StateStore(cache: cache)
            let fail = { (url: String) in StateStore.Change.failed(.init(url: url, key: url, errorClass: "network", status: nil, reason: "r", failedAt: 0)) }
            let ok = { (url: String) in StateStore.Change.succeeded(url: url, validators: .init(key: url, etag: "\"e\"", lastModified: nil)) }
            try run.apply([ok("https://e/0"), fail("https://e/1"), ok("https://e/1")])
            #expect(try run.failedCount() == 0)
            try other.apply([fail("https://e/2")])
            try run.apply([ok("https://e/2")])
            #expect(try run.failedCount() == 0)
            #expect(try other.validators(forKey: "https://e/2")?.etag == "\"e\"")
        }
    }

    @Test func twoStoresOnOneDatabaseWriteConcurrently() throws {
        try withPreparedCache { cache in
            let a = try StateStore(cache: cache)
            let b = try StateStore(cache: cache)
            DispatchQueue.concurrentPerform(iterations: 2) { i in
                let s = i == 0 ? a : b
                for n in 0..<50 {
                    try! s.apply([.failed(.init(url: "https://e/\(i)/\(n)", key: "k", errorClass: "bad-image", status: nil, reason: "r", failedAt: 0))])
                }
            }
            #expect(try a.failedCount() == 100)
        }
    }

    /// Validators written in statements of many rows
    /// (`validatorRowsPerStatement`) and the rows left over, one each:
    /// every row reads back as written, the last change of a key wins
    /// (twice in one statement, or deleted after an upsert still waiting
    /// in the same batch), an empty ETag stays empty, and a re-run with the
    /// same values or new ones leaves exactly those.
    @Test func validatorsInStatementsOfManyRows() throws {
        try withPreparedCache { cache in
            let s = try StateStore(cache: cache)
            let perStatement = StateStore.validatorRowsPerStatement
            let count = 2 * perStatement + 7
            func validators(_ n: Int, round: Int) -> StateStore.Validators {
                .init(key: "https://e/\(n).jpg" + (n % 5 == 0 ? "?sig=\(n)" : ""),
                      etag: n % 3 == 0 ? nil : (n == 4 ? "" : "\"e\(n)-\(round)\""),
                      lastModified: n % 2 == 0 ? "Sun, 22 Nov 2026 22:29:0\(n % 10) GMT" : nil)
            }
            func expected(_ n: Int, round: Int) -> StateStore.Validators? {
                let v = validators(n, round: round)
                return v.etag == nil && v.lastModified == nil ? nil : v
            }
            var changes = (0..<count).map { StateStore.Change.succeeded(url: "https://e/\($0).jpg", validators: validators($0, round: 1)) }
            // Key 1 again later in the first statement: the later row wins.
            changes.insert(.succeeded(url: "https://e/1.jpg", validators: .init(key: "https://e/1.jpg", etag: "\"again\"", lastModified: nil)), at: 10)
            // Successes without validators remove key 2, written by the
            // first statement, and the last key, whose upsert still waits
            // among the rows left over. (Every sixth key has no validators
            // at all: those deletes leave the waiting rows waiting.)
            for n in [2, count - 1] {
                changes.append(.succeeded(url: "https://e/\(n).jpg", validators: .init(key: validators(n, round: 1).key, etag: nil, lastModified: nil)))
            }
            try s.apply(changes)
            for n in 0..<count {
                let want: StateStore.Validators? = switch n {
                case 1: .init(key: "https://e/1.jpg", etag: "\"again\"", lastModified: nil)
                case 2, count - 1: nil
                default: expected(n, round: 1)
                }
                #expect(try s.validators(forKey: validators(n, round: 1).key) == want, "\(n)")
            }
            #expect(try s.validators(forKey: "https://e/4.jpg")?.etag == "")
            // A re-run: the same values, then new ETags.
            for round in [1, 1, 2] {
                try s.apply((0..<count).map { .succeeded(url: "https://e/\($0).jpg", validators: validators($0, round: round)) })
                for n in 0..<count {
                    #expect(try s.validators(forKey: validators(n, round: round).key) == expected(n, round: round), "round \(round), \(n)")
                }
            }
        }
    }

    /// An upsert that fails rolls back its whole batch, the rows already
    /// written by full statements of it included.
    @Test func aFailedBatchWritesNothing() throws {
        try withPreparedCache { cache in
            let s = try StateStore(cache: cache)
            let rows = (0..<(StateStore.validatorRowsPerStatement + 3)).map {
                StateStore.Change.succeeded(url: "https://e/\($0)", validators: .init(key: "https://e/\($0)", etag: "\"e\"", lastModified: nil))
            }
            // SQLite refuses such an upsert only on a damaged database: a
            // trigger the test adds refuses one key instead.
            let queue = try DatabaseQueue(path: StateStore.databasePath(for: cache))
            try queue.write { db in
                try db.execute(sql: "CREATE TRIGGER no_x BEFORE INSERT ON validator WHEN NEW.key = 'https://e/x' BEGIN SELECT RAISE(ABORT, 'refused'); END")
            }
            #expect(throws: DatabaseError.self) {
                try s.apply(rows + [.succeeded(url: "https://e/x", validators: .init(key: "https://e/x", etag: "\"e\"", lastModified: nil))])
            }
            #expect(try s.validators(forKey: "https://e/0") == nil)
            #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM validator") } == 0)
        }
    }

    /// A new database gets the validator table of v3 from v1, and every
    /// migration is recorded.
    @Test func newDatabaseHasTheV3ValidatorTable() throws {
        try withPreparedCache { cache in
            _ = try StateStore(cache: cache)
            let (sql, migrations) = try DatabaseQueue(path: StateStore.databasePath(for: cache)).read { db in
                (try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'validator'") ?? "",
                 try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY 1"))
            }
            #expect(sql.contains("WITHOUT ROWID"))
            #expect(migrations == ["v1", "v2", "v3"])
        }
    }

    /// A state database of the v2 schema (a rowid table keyed by TEXT)
    /// keeps its validators and failed URLs when v3 rebuilds the table
    /// WITHOUT ROWID; opening it again changes nothing.
    @Test func v2DatabaseKeepsItsValidators() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.sqlite"
        do {
            let q = try DatabaseQueue(path: path)
            try q.write { db in
                try db.execute(sql: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1'), ('v2');
                    CREATE TABLE failed_url (url TEXT PRIMARY KEY, key TEXT NOT NULL, error_class TEXT NOT NULL, status INTEGER,
                                             reason TEXT NOT NULL, failed_at DOUBLE NOT NULL, shown_url TEXT);
                    CREATE TABLE validator (key TEXT PRIMARY KEY, etag TEXT, last_modified TEXT);
                    INSERT INTO failed_url VALUES ('https://h/f.jpg', 'https://h/f.jpg', 'bad-image', NULL, 'x', 2, NULL);
                    """)
                for n in 0..<100 {
                    try db.execute(sql: "INSERT INTO validator VALUES (?, ?, ?)",
                                   arguments: ["https://h/\(n).jpg", n % 2 == 0 ? "\"e\(n)\"" : nil, n % 2 == 0 ? nil : "Mon, 23 Nov 2026 10:00:00 GMT"])
                }
                try db.execute(sql: "INSERT INTO validator VALUES (?, '\"d\"', NULL)", arguments: [StateStore.storedForm("https://h/d.jpg?token=T")])
            }
        }
        func tableSQL() throws -> String {
            try DatabaseQueue(path: path).read { db in
                try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'validator'") ?? ""
            }
        }
        #expect(try !tableSQL().contains("WITHOUT ROWID"))
        for _ in 0..<2 {
            let s = try StateStore(path: path)
            #expect(try tableSQL().contains("WITHOUT ROWID"))
            for n in 0..<100 {
                #expect(try s.validators(forKey: "https://h/\(n).jpg") ==
                        .init(key: "https://h/\(n).jpg", etag: n % 2 == 0 ? "\"e\(n)\"" : nil,
                              lastModified: n % 2 == 0 ? nil : "Mon, 23 Nov 2026 10:00:00 GMT"))
            }
            #expect(try s.validators(forKey: "https://h/d.jpg?token=T")?.etag == "\"d\"")
            #expect(try s.failedURLSet() == ["https://h/f.jpg"])
            // The rebuilt table takes upserts and deletes as before.
            try s.apply([.succeeded(url: "https://h/1.jpg", validators: .init(key: "https://h/1.jpg", etag: nil, lastModified: nil)),
                         .succeeded(url: "https://h/1.jpg", validators: .init(key: "https://h/1.jpg", etag: nil, lastModified: "Mon, 23 Nov 2026 10:00:00 GMT"))])
        }
        let migrations = try DatabaseQueue(path: path).read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY 1") }
        #expect(migrations == ["v1", "v2", "v3"])
    }
}
