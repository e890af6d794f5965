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

/// SQLite opens `libCachedImageData.db-journal`, `-wal` and `-shm` by
/// name beside the database, and rolls a hot journal back into it when it
/// opens it: a neighbour who may create names in a shared cache folder
/// (1777) could plant one and rewrite our rows. Such a side file of another
/// user, or a link at its name, is refused before SQLite opens anything.
@Suite struct FlutterSideFilesOfANeighbour {
    /// A real hot rollback journal for the fixture's database: the pages of
    /// a copy whose row 1 names `planted.png`, taken from an open
    /// transaction (`synchronous=OFF`, so its record count is the file's
    /// length, as after a crash). Returns its path (0644).
    static func hotJournal(_ f: HostileFlutterFixture) throws -> String {
        let copy = f.dir + "/neighbour.db", journal = f.dir + "/hot-journal"
        let script = """
            import sqlite3, sys, shutil
            src, copy, out = sys.argv[1], sys.argv[2], sys.argv[3]
            shutil.copyfile(src, copy)
            db = sqlite3.connect(copy, isolation_level=None)
            db.execute("PRAGMA synchronous=OFF")
            db.execute("UPDATE cacheObject SET relativePath='planted.png' WHERE _id=1")
            db.execute("BEGIN")
            db.execute("UPDATE cacheObject SET relativePath='other.png' WHERE _id=1")
            shutil.copyfile(copy + "-journal", out)
            db.execute("ROLLBACK")
            """
        let r = try #require(runPython(script, [f.database, copy, journal]))
        #expect(r.status == 0, "\(r.output)")
        chmod(journal, 0o644)
        return journal
    }

    /// The journal is hot: SQLite itself, opening a copy of the database
    /// with it beside, rolls it back and row 1 names `planted.png`.
    static func expectReplayedBySQLite(_ f: HostileFlutterFixture, journal: String) throws {
        let control = f.dir + "/control"
        try FileManager.default.createDirectory(atPath: control, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: f.database, toPath: control + "/libCachedImageData.db")
        try FileManager.default.copyItem(atPath: journal, toPath: control + "/libCachedImageData.db-journal")
        let read = try #require(runPython("""
            import sqlite3, sys
            print(sqlite3.connect(sys.argv[1]).execute("SELECT relativePath FROM cacheObject WHERE _id = 1").fetchone()[0])
            """, [control + "/libCachedImageData.db"]))
        #expect(read.output.trimmingCharacters(in: .whitespacesAndNewlines) == "planted.png", "\(read.output)")
    }

    /// Root's database in a 1777 folder; uid 65534 plants the hot journal
    /// (or a copy of it at `-wal` or `-shm`) with `cp`, or a link to it
    /// with `ln -s`. `cache prune`, `verify --delete`, `warm` and `stats`:
    /// exit 3, one line naming the side file and its owner (or the link),
    /// and the database and the side file are as they were.
    @Test(.needsTools("python3", for: "writing flutter databases with Python's sqlite3"),
          arguments: ["-journal", "-wal", "-shm"], [false, true])
    func aPlantedSideFileIsRefusedBeforeSQLiteOpensIt(suffix: String, asLink: Bool) throws {
        let setpriv = try neededTool("setpriv", for: "planting a file as another user")
        if geteuid() != 0 { try prerequisiteMissing("planting a file as another user needs root: the test did not run") }
        let f = HostileFlutterFixture()
        defer { f.cleanup() }
        try f.writeDatabase(row: "'http://h/b', 'http://h/b', 'b.png', NULL, 0, 0, 1")
        let journal = try Self.hotJournal(f)
        try Self.expectReplayedBySQLite(f, journal: journal)
        #expect(chmod(f.cache, 0o1777) == 0)
        let side = f.database + suffix
        let plant = try #require(runTool(setpriv, ["--reuid=65534", "--regid=65534", "--clear-groups"]
            + (asLink ? ["ln", "-s", journal, side] : ["cp", journal, side])))
        #expect(plant.status == 0, "\(plant.output)")
        var st = stat()
        #expect(lstat(side, &st) == 0 && st.st_uid == 65534)
        let before = HostileJournalFixture.snapshot(f.cache)
        let line = asLink ? "imgwarm: \(side): is a symbolic link; imgwarm does not follow one here"
            : "imgwarm: \(side): owned by uid 65534, not by this user (uid 0), in a folder every user may write (mode 1777)"
        for args in refusingCommands(layout: "flutter", cache: f.cache, dir: f.dir) + [["cache", "stats", "--layout", "flutter", "--cache", f.cache]] {
            let r = try runImgwarm(args, as: nil)
            #expect(r.status == 3, "\(args[1]) \(suffix): \(r.output)")
            #expect(r.output.contains(line), "\(args[1]) \(suffix): \(r.output)")
            #expect(r.output.split(separator: "\n").count == 1, "\(args[1]) \(suffix): \(r.output)")
            #expect(HostileJournalFixture.snapshot(f.cache) == before, "\(args[1]) \(suffix)")
            #expect(lstat(side, &st) == 0 && st.st_uid == 65534, "\(args[1]) \(suffix): the planted file is left as it is")
        }
    }

    /// The rule is the owner's, not the name's: the same hot journal, ours
    /// (a killed run of ours leaves one), is rolled back as SQLite does
    /// when `cache prune` opens the database: row 1 then names
    /// `planted.png`, so `good.png` is a file no row names and goes.
    /// (What the refusal above keeps a neighbour's journal from doing.)
    @Test(.needsTools("python3", for: "writing flutter databases with Python's sqlite3"))
    func ourOwnHotJournalIsRolledBack() throws {
        let f = HostileFlutterFixture()
        defer { f.cleanup() }
        try f.writeDatabase(row: "'http://h/b', 'http://h/b', 'b.png', NULL, 0, 0, 1")
        let journal = try Self.hotJournal(f)
        try FileManager.default.copyItem(atPath: journal, toPath: f.database + "-journal")
        let r = try runImgwarm(["cache", "prune", "--layout", "flutter", "--cache", f.cache, "--max-age", "36500d"], as: nil)
        #expect(r.status == 0, "\(r.output)")
        #expect(!FileManager.default.fileExists(atPath: f.database + "-journal"))
        #expect(!FileManager.default.fileExists(atPath: f.cache + "/libCachedImageData/good.png"), "\(r.output)")
        let read = try #require(runPython("""
            import sqlite3, sys
            print(sqlite3.connect(sys.argv[1]).execute("SELECT relativePath FROM cacheObject WHERE _id = 1").fetchone()[0])
            """, [f.database]))
        #expect(read.output.trimmingCharacters(in: .whitespacesAndNewlines) == "planted.png", "\(read.output)")
    }
}
