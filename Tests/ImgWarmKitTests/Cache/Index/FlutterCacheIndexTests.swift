import Foundation
import Testing
import GRDB
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm
#if canImport(Glibc)
import Glibc
#endif

/// flutter_cache_manager's database as `FlutterCacheIndex` opens, writes
/// and prunes it. Schema and version: Baseflow/flutter_cache_manager,
/// flutter_cache_manager/lib/src/storage/cache_info_repositories/
/// cache_object_provider.dart (`open`: `openDatabase(version: 3)`,
/// `onCreate`: the cacheObject table and the unique index on key); the row
/// a download leaves: `WebHelper._manageResponse` then `CacheStore.putFile`
/// (url, key, relativePath, eTag, validTill, touched, length).
@Suite struct FlutterCacheIndexTests {
    /// A temp cache folder, removed when the test ends.
    final class Folder {
        let dir = makeTempDirectory("imgwarm-flutter-index")
        var database: String { dir + "/libCachedImageData.db" }
        var files: String { dir + "/libCachedImageData" }
        deinit { try? FileManager.default.removeItem(atPath: dir) }

        /// A database written as `sql` leaves it (no imgwarm involved).
        func writeDatabase(_ sql: String) throws {
            let q = try DatabaseQueue(path: database)
            try q.write { try $0.execute(sql: sql) }
        }

        func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
    }

    struct OpenCase: CustomTestStringConvertible, Sendable {
        let name: String
        /// SQL run on a new database first; nil: no database file.
        let sql: String?
        let writable: Bool
        let expected: String  // "opened+db", "opened-db" or the refusal text
        var testDescription: String { "\(name), \(writable ? "writable" : "read-only")" }
    }

    static let v3 = FlutterCacheIndex.createSQL + "; PRAGMA user_version = 3;"

    static let openCases: [OpenCase] = [
        .init(name: "no database", sql: nil, writable: false, expected: "opened-db"),
        .init(name: "no database", sql: nil, writable: true, expected: "opened+db"),
        .init(name: "the library's schema", sql: v3, writable: false, expected: "opened+db"),
        .init(name: "the library's schema", sql: v3, writable: true, expected: "opened+db"),
        .init(name: "schema version 2", sql: FlutterCacheIndex.createSQL + "; PRAGMA user_version = 2;", writable: true,
              expected: "database of schema version 2, not flutter_cache_manager's 3; left as it is"),
        .init(name: "another app's database", sql: "CREATE TABLE other (x); PRAGMA user_version = 3;", writable: false,
              expected: "no cacheObject table with _id, url, key, relativePath, eTag, validTill, touched, length"),
        .init(name: "a column missing",
              sql: "CREATE TABLE cacheObject (_id integer primary key, url text, key text, relativePath text, eTag text, validTill integer, length integer); PRAGMA user_version = 3;",
              writable: true, expected: "no cacheObject table with touched;"),
        .init(name: "a row with a path for a name", sql: v3 + """
              INSERT INTO cacheObject (url, key, relativePath, validTill, touched, length)
              VALUES ('https://h/a.png', 'https://h/a.png', '../../etc/passwd', 0, 0, 1);
              """, writable: true, expected: "row _id 1: relativePath is not one plain file name"),
    ]

    /// Every row is checked before any is used; a database of another
    /// version or shape is left as it is, whatever the mode.
    @Test(arguments: openCases)
    func openDecidesByWhatTheFolderHolds(_ c: OpenCase) throws {
        let folder = Folder()
        if let sql = c.sql { try folder.writeDatabase(sql) }
        let before = try? Data(contentsOf: URL(fileURLWithPath: folder.database))
        let index = FlutterCacheIndex(directory: folder.dir)
        do {
            try index.open(writable: c.writable)
            #expect(c.expected == (folder.exists(folder.database) ? "opened+db" : "opened-db"))
            #expect(folder.exists(folder.files) == c.writable, "the files folder is made to write, never to read")
        } catch {
            #expect("\(error)".hasPrefix(folder.database + ": "), "\(error)")
            #expect("\(error)".contains(c.expected), "\(error)")
            #expect((error as? ImgWarmError)?.exitStatus == ExitStatus.cacheUnusable, "\(error)")
            #expect((try? Data(contentsOf: URL(fileURLWithPath: folder.database))) == before, "a refused database was changed")
        }
    }

    /// A new database is the library's: its schema at version 3, made 0600
    /// (it is imgwarm's, in a folder the app may share).
    @Test func aNewDatabaseIsTheLibrarysSchemaAtVersion3Mode0600() throws {
        let folder = Folder()
        let index = FlutterCacheIndex(directory: folder.dir)
        try index.open(writable: true)
        try index.close()
        var st = stat()
        #expect(stat(folder.database, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o600)
        let q = try DatabaseQueue(path: folder.database)
        let (version, columns, indexes) = try q.read { db in
            (try Int.fetchOne(db, sql: "PRAGMA user_version"),
             try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('cacheObject')"),
             try String.fetchAll(db, sql: "SELECT name FROM pragma_index_list('cacheObject')"))
        }
        #expect(version == 3)
        #expect(columns == FlutterCacheIndex.columns)
        #expect(indexes == ["cacheObjectkey"])
    }

    /// A store leaves the row the library's download leaves and a file
    /// under a new uuid name with the Content-Type's extension; a second
    /// store of the key replaces the row and removes the old file; a
    /// lookup finds the file.
    @Test func storeLookupAndReplaceLeaveTheLibrarysRow() throws {
        let folder = Folder()
        let index = FlutterCacheIndex(directory: folder.dir)
        try index.open(writable: true)
        let key = CacheEntryName(storedName: "avatar-7")
        var response = StoredResponse(url: "https://cdn.example/a.png", contentType: "image/png", etag: "\"v1\"",
                                      cacheControl: "max-age=60", requestedAt: 1_700_000_000_000, receivedAt: 1_700_000_000_000)
        let first: [UInt8] = [1, 2, 3, 4]
        try first.withUnsafeBytes { bytes in
            try index.store(bytes, as: key, response: response, keepExisting: false)
        }
        let found = try #require(index.existingEntry(for: key))
        #expect(found.size == 4)
        #expect(found.path.hasPrefix(folder.files + "/") && found.path.hasSuffix(".png"))
        #expect(FileManager.default.contents(atPath: found.path) == Data(first))
        #expect(index.existingEntry(for: CacheEntryName(storedName: "absent")) == nil)

        // keepExisting: the row and file stay as they are.
        try [UInt8]([9]).withUnsafeBytes { bytes in
            try index.store(bytes, as: key, response: response, keepExisting: true)
        }
        #expect(index.existingEntry(for: key)?.path == found.path)

        response.contentType = "image/webp"
        try [UInt8]([5, 6]).withUnsafeBytes { bytes in
            try index.store(bytes, as: key, response: response, keepExisting: false)
        }
        let replaced = try #require(index.existingEntry(for: key))
        #expect(replaced.path != found.path && replaced.path.hasSuffix(".webp") && replaced.size == 2)
        #expect(!FileManager.default.fileExists(atPath: found.path), "the replaced file stays behind")
        try index.close()

        let q = try DatabaseQueue(path: folder.database)
        let row = try #require(try q.read { db in
            try GRDB.Row.fetchOne(db, sql: "SELECT url, key, relativePath, eTag, validTill, touched, length FROM cacheObject")
        })
        #expect(try q.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM cacheObject") } == 1)
        #expect(row["url"] as String? == "https://cdn.example/a.png")
        #expect(row["key"] as String? == "avatar-7")
        #expect(row["relativePath"] as String? == String(replaced.path.split(separator: "/").last ?? ""))
        #expect(row["eTag"] as String? == "\"v1\"")
        // `HttpGetResponse.validTill`: max-age=60 from the response's time.
        let validTill: Int64? = row["validTill"]
        #expect(validTill == 1_700_000_060_000)
        #expect(row["length"] as Int64? == 2)
    }

    struct PruneCase: CustomTestStringConvertible, Sendable {
        let name: String
        let maxAge: Double?
        let maxSize: UInt64?
        let expireType: CacheExpireType?
        let maxObjects: Int?
        let refusal: String?
        var testDescription: String { name }
    }

    /// The options flutter_cache_manager has a meaning for (`Config`:
    /// `stalePeriod`, `maxNrOfCacheObjects`) and those it has none for.
    @Test(arguments: [
        PruneCase(name: "defaults", maxAge: nil, maxSize: nil, expireType: nil, maxObjects: nil, refusal: nil),
        PruneCase(name: "--max-age 0", maxAge: 0, maxSize: nil, expireType: nil, maxObjects: nil, refusal: nil),
        PruneCase(name: "--max-objects 0", maxAge: nil, maxSize: nil, expireType: nil, maxObjects: 0, refusal: nil),
        PruneCase(name: "--max-size", maxAge: nil, maxSize: 1, expireType: nil, maxObjects: nil,
                  refusal: "--max-size has no meaning under --layout flutter"),
        PruneCase(name: "--expire-type", maxAge: 1, maxSize: nil, expireType: .modification, maxObjects: nil,
                  refusal: "--expire-type and --trim-ratio have no meaning under --layout flutter"),
        PruneCase(name: "negative --max-objects", maxAge: nil, maxSize: nil, expireType: nil, maxObjects: -1,
                  refusal: "--max-objects must be 0 or more"),
        PruneCase(name: "infinite --max-age", maxAge: .infinity, maxSize: nil, expireType: nil, maxObjects: nil,
                  refusal: "--max-age must be a duration of zero or more"),
    ])
    func pruneOptions(_ c: PruneCase) throws {
        let folder = Folder()
        let index = FlutterCacheIndex(directory: folder.dir)
        var options = PruneOptions(layout: FlutterLayout(), maxAge: c.maxAge, maxSize: c.maxSize, expireType: c.expireType)
        options.maxObjects = c.maxObjects
        do {
            _ = try index.prune(options)
            #expect(c.refusal == nil)
        } catch {
            #expect(c.refusal.map { "\(error)".hasPrefix($0) } == true, "\(error)")
            #expect((error as? ImgWarmError)?.exitStatus == ExitStatus.usage, "\(error)")
        }
    }

    /// Stale rows go with their files, files no row names go, pinned keys
    /// stay; a dry run reports the same and changes nothing.
    @Test(arguments: [true, false]) func pruneRemovesStaleRowsAndOrphans(dryRun: Bool) throws {
        let folder = Folder()
        let now: Int64 = 1_800_000_000_000
        let day: Int64 = 86_400_000
        try folder.writeDatabase(Self.v3 + """
            INSERT INTO cacheObject (url, key, relativePath, validTill, touched, length) VALUES
              ('https://h/old', 'old', 'old.png', 0, \(now - 40 * day), 3),
              ('https://h/new', 'new', 'new.png', 0, \(now - day), 3),
              ('https://h/pin', 'pin', 'pin.png', 0, \(now - 50 * day), 3);
            """)
        try FileManager.default.createDirectory(atPath: folder.files, withIntermediateDirectories: true)
        for name in ["old.png", "new.png", "pin.png", "orphan.png"] {
            #expect(FileManager.default.createFile(atPath: folder.files + "/" + name, contents: Data([1, 2, 3])))
        }
        var options = PruneOptions(layout: FlutterLayout(), dryRun: dryRun, now: now * 1_000_000)
        options.pinned = PinnedNames(keys: ["pin"], layout: FlutterLayout())
        let result = try FlutterCacheIndex(directory: folder.dir).prune(options)
        #expect(Set(result.removed.map { String($0.path.split(separator: "/").last ?? "") }) == ["old.png", "orphan.png"])
        #expect(result.entriesBefore == 3 && result.entriesAfter == 2)
        #expect(result.bytesBefore == 9 && result.bytesAfter == 6)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: folder.files))
        let keys = try DatabaseQueue(path: folder.database).read { try String.fetchAll($0, sql: "SELECT key FROM cacheObject ORDER BY key") }
        if dryRun {
            #expect(left == ["old.png", "new.png", "pin.png", "orphan.png"])
            #expect(keys == ["new", "old", "pin"])
        } else {
            #expect(left == ["new.png", "pin.png"])
            #expect(keys == ["new", "pin"])
        }
    }
}
