import Foundation
import Testing
import TestSupport

// flutter_cache_manager's database as data: a row imgwarm would act on must
// have the types `CacheObject.fromMap` reads (Baseflow/flutter_cache_manager,
// flutter_cache_manager/lib/src/storage/cache_object.dart: `url`,
// `relativePath` as String, `validTill`, `touched` as int, `eTag` String?,
// `length` int?) and a non-null text key, and its relativePath must be one
// plain file name. The database of another user in a shared folder is not
// used; imgwarm's own is made 0600.

/// A flutter cache folder whose database holds the rows of `inserts`
/// (Python's sqlite3, the schema of `CacheObjectProvider`, version 3), one
/// good row with its file, and a victim folder beside it.
struct HostileFlutterFixture {
    let dir: String
    var cache: String { dir + "/cache" }
    var victim: String { dir + "/victim" }
    var database: String { cache + "/libCachedImageData.db" }

    init() {
        dir = makeTempDirectory("imgwarm-flutter")
        chmod(dir, 0o755)
        let fm = FileManager.default
        try! fm.createDirectory(atPath: cache + "/libCachedImageData", withIntermediateDirectories: true)
        try! fm.createDirectory(atPath: victim, withIntermediateDirectories: true)
        for name in ["x.png", "abs.png"] {
            _ = fm.createFile(atPath: victim + "/" + name, contents: Data("victim \(name)\n".utf8))
            FileTimes.set(victim + "/" + name, atime: 1_000_000_000, mtime: 1_000_000_000)
        }
        _ = fm.createFile(atPath: cache + "/libCachedImageData/good.png", contents: Data(TinyPNG.make(seed: 1)))
    }

    func cleanup() { try? FileManager.default.removeItem(atPath: dir) }

    /// The database with the good row (_id 1) and `values`, the SQL
    /// values of one more row (_id 2): url, key, relativePath, eTag,
    /// validTill, touched, length.
    func writeDatabase(row values: String) throws {
        try? FileManager.default.removeItem(atPath: database)
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.executescript('''
              create table cacheObject (_id integer primary key, url text, key text, relativePath text,
                eTag text, validTill integer, touched integer, length integer);
              create unique index cacheObjectkey ON cacheObject (key);
              PRAGMA user_version = 3;
              insert into cacheObject values (1, 'http://h/good.png', 'http://h/good.png', 'good.png', NULL, 0, 0, 10);
            ''')
            db.execute("insert into cacheObject values (2, " + sys.argv[2] + ")")
            db.commit()
            """
        let r = try #require(runPython(script, [database, values]))
        #expect(r.status == 0, "\(r.output)")
    }
}

@Suite struct FlutterRowsAreData {
    /// Rows with NULLs, wrong types, absolute, `../` and hidden paths: every
    /// command (prune, verify --delete, warm) is refused with exit 3 and one
    /// line naming the database and row 2; the victim, the good row's file
    /// and the database are as they were. As root and as uid 65534 (who
    /// owns everything, so the kernel would let it delete the victim).
    @Test(.needsTools("python3", for: "writing flutter databases with Python's sqlite3"), arguments: [false, true])
    func hostileRowsAreRefusedAndNothingChanges(asNobody: Bool) throws {
        let f = HostileFlutterFixture()
        defer { f.cleanup() }
        let rows: [(String, String)] = [
            ("'http://h/a', NULL, 'a.png', NULL, 0, 0, 1", "key is NULL, not text"),
            ("NULL, 'k', 'a.png', NULL, 0, 0, 1", "url is NULL, not text"),
            ("'http://h/a', 'k', NULL, NULL, 0, 0, 1", "relativePath is NULL, not text"),
            ("'http://h/a', 'k', '\(f.victim)/abs.png', NULL, 0, 0, 1", "relativePath is not one plain file name"),
            ("'http://h/a', 'k', '../../victim/x.png', NULL, 0, 0, 1", "relativePath is not one plain file name"),
            ("'http://h/a', 'k', '..', NULL, 0, 0, 1", "relativePath is not one plain file name"),
            ("'http://h/a', 'k', '.imgwarm', NULL, 0, 0, 1", "relativePath is not one plain file name"),
            ("'http://h/a', 'k', 'a.png', NULL, 0, NULL, 1", "touched is NULL, not an integer"),
            ("'http://h/a', 'k', 'a.png', NULL, 0, 'yesterday', 1", "touched is text, not an integer"),
            ("'http://h/a', 'k', 'a.png', NULL, NULL, 0, 1", "validTill is NULL, not an integer"),
            ("'http://h/a', 'k', 'a.png', NULL, 0, 0, 1.5", "length is 1.5, not an integer"),
            ("'http://h/a', X'6b', 'a.png', NULL, 0, 0, 1", "key is a blob, not text"),
        ]
        let uid: uid_t? = asNobody ? 65534 : nil
        for (values, reason) in rows {
            try f.writeDatabase(row: values)
            if asNobody {
                for path in [f.dir, f.cache, f.database, f.cache + "/libCachedImageData", f.cache + "/libCachedImageData/good.png",
                             f.victim, f.victim + "/x.png", f.victim + "/abs.png"] { chown(path, 65534, 65534) }
            }
            let victimBefore = HostileJournalFixture.snapshot(f.victim)
            let cacheBefore = HostileJournalFixture.snapshot(f.cache)
            for args in refusingCommands(layout: "flutter", cache: f.cache, dir: f.dir) {
                let r = try runImgwarm(args, as: uid)
                let what = "\(args[0]) \(args[1]) \(values)"
                #expect(r.status == 3, "\(what): \(r.output)")
                #expect(r.output.contains("imgwarm: \(f.database): row _id 2: \(reason)"), "\(what): \(r.output)")
                #expect(r.output.split(separator: "\n").count == 1, "\(what): \(r.output)")
                #expect(HostileJournalFixture.snapshot(f.victim) == victimBefore, "\(what)")
                #expect(HostileJournalFixture.snapshot(f.cache) == cacheBefore, "\(what)")
            }
        }
    }
}

@Suite struct FlutterDatabasesOfOtherUsers {
    /// Root runs; uid 65534 owns the database, or a side file SQLite would
    /// replay into it, in a 1777 folder: refused, exit 3, the file and the
    /// uid named, nothing changed.
    @Test(.needsTools("python3", for: "writing flutter databases with Python's sqlite3"),
          arguments: ["libCachedImageData.db", "libCachedImageData.db-journal", "libCachedImageData.db-wal"])
    func aNeighboursDatabaseInAWorldWritableFolderIsRefused(name: String) throws {
        if geteuid() != 0 { try prerequisiteMissing("planting a database as another user needs root: the test did not run") }
        let f = HostileFlutterFixture()
        defer { f.cleanup() }
        try f.writeDatabase(row: "'http://h/b', 'http://h/b', 'b.png', NULL, 0, 0, 1")
        if name != "libCachedImageData.db" { _ = FileManager.default.createFile(atPath: f.cache + "/" + name, contents: Data()) }
        #expect(chown(f.cache + "/" + name, 65534, 65534) == 0)
        #expect(chmod(f.cache, 0o1777) == 0)
        let before = HostileJournalFixture.snapshot(f.cache)
        for args in refusingCommands(layout: "flutter", cache: f.cache, dir: f.dir) {
            let r = try runImgwarm(args, as: nil)
            #expect(r.status == 3, "\(r.output)")
            #expect(r.output.contains("imgwarm: \(f.cache)/\(name): owned by uid 65534, not by this user (uid 0), in a folder every user may write (mode 1777)"),
                    "\(r.output)")
            #expect(HostileJournalFixture.snapshot(f.cache) == before)
        }
    }

    /// In a 2775 team folder of uid 65534's primary group, its database is
    /// used (prune runs, exit 0).
    @Test(.needsTools("python3", for: "writing flutter databases with Python's sqlite3"))
    func aTeamMembersDatabaseIsUsed() throws {
        if geteuid() != 0 { try prerequisiteMissing("planting a database as another user needs root: the test did not run") }
        let f = HostileFlutterFixture()
        defer { f.cleanup() }
        try f.writeDatabase(row: "'http://h/b', 'http://h/b', 'b.png', NULL, 0, 0, 1")
        #expect(chown(f.database, 65534, 65534) == 0)
        #expect(chown(f.cache, 0, 65534) == 0)
        #expect(chmod(f.cache, 0o2775) == 0)
        let r = try runImgwarm(refusingCommands(layout: "flutter", cache: f.cache, dir: f.dir)[0], as: nil)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("removed 2 files"), "\(r.output)")
    }

    /// The database imgwarm makes is 0600 under umask 022, and so is the
    /// rollback journal SQLite makes beside it.
    @Test func theDatabaseIsMadePrivate() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(2)
        let r = try f.warm([f.writeManifest(urls), "--layout", "flutter"])
        #expect(r.status == 0, "\(r.stderr)")
        var st = stat()
        #expect(stat(f.cache + "/libCachedImageData.db", &st) == 0)
        #expect(st.st_mode & 0o777 == 0o600, "mode \(String(st.st_mode & 0o777, radix: 8))")
    }
}
