import Foundation
import Testing
import TestSupport
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// Names, journal lines and records of the Android and Flutter layouts,
/// against values read from the libraries' sources:
/// - Glide: github.com/bumptech/glide at bf4901de (library/..., third_party/disklrucache/...)
/// - Coil 3: github.com/coil-kt/coil at a42b7709 (main); Coil 2: tag 2.7.0
/// - flutter_cache_manager: github.com/Baseflow/flutter_cache_manager at 515cc9e5
@Suite struct DiskLruIndexTests {
    // MARK: Keys and names

    /// Glide: `DataCacheKey.updateDiskCacheKey` (DataCacheKey.java:44-47)
    /// feeds `GlideUrl.getCacheKey().getBytes(CHARSET)` (GlideUrl.java:110-112,
    /// 120-128) then the signature, `EmptySignature` adding nothing
    /// (EmptySignature.java:26-28); `SafeKeyGenerator` digests with SHA-256
    /// (SafeKeyGenerator.java:30) to lowercase hex (54-56); the data is value
    /// 0 (DiskLruCacheWrapper.java:24, `editor.getFile(0)` at 157), named
    /// `key + "." + index` (DiskLruCache.java:773). Checked against sha256sum.
    @Test func glideNamesAreSHA256OfTheURLThenTheSignatureDotZero() throws {
        let url = "https://cdn.example.com/photos/a b.jpg?w=300&h=200"
        let sha = try #require(coreutilsDigest("sha256sum", of: url))
        #expect(GlideLayout().entryName(forKey: url) == CacheEntryName(storedName: sha + ".0"))
        // `.signature(new ObjectKey("v2"))`: ObjectKey.java:44-46 adds
        // "v2".getBytes() after the URL's bytes; the manifest key
        // `<url>v2` gives the same digest.
        let signed = try #require(coreutilsDigest("sha256sum", of: url + "v2"))
        #expect(GlideLayout().entryName(forKey: url + "v2").storedName == signed + ".0")
        #expect(GlideLayout.defaultSizeLimit == 262_144_000)  // DiskCache.java:14, 250 * 1024 * 1024
        #expect(CacheLayoutKind.glide.defaultFolder == "image_manager_disk_cache")  // DiskCache.java:16
    }

    /// Coil: `String.hash() = encodeUtf8().sha256().hex()` (Coil 3
    /// RealDiskCache.kt:49; 2.7.0 RealDiskCache.kt the same) of
    /// `options.diskCacheKey ?: url` (NetworkFetcher.kt:284-285); the body is
    /// value 1, the metadata value 0 (RealDiskCache.kt:71-72).
    @Test func coilNamesAreSHA256OfTheKeyDotOne() throws {
        let url = "https://img.example/ü/x.webp"
        let sha = try #require(coreutilsDigest("sha256sum", of: url))
        #expect(CoilLayout().entryName(forKey: url).storedName == sha + ".1")
        #expect(Coil2Layout().entryName(forKey: url).storedName == sha + ".1")
        #expect(CoilLayout.defaultSizeLimit == 250 * 1024 * 1024)  // DiskCache.kt:117
        #expect(CacheLayoutKind.coil.defaultFolder == "coil3_disk_cache")  // coil3/disk/utils.kt:14
        #expect(CacheLayoutKind.coil2.defaultFolder == "image_cache")  // 2.7.0 coil/util/Utils.kt:288
    }

    // MARK: Journal lines

    /// The header `rebuildJournal` writes (DiskLruCache.java:387-395): MAGIC
    /// and VERSION_1 (96-97), the app version and value count, a blank
    /// line. Glide: 1, 1 (DiskLruCacheWrapper.java:23-24); Coil 3: 3, 2
    /// (RealDiskCache.kt:23-24); Coil 2: 1, 2 (2.7.0 RealDiskCache.kt:22-23).
    @Test func headersOfEachLayout() {
        #expect(GlideLayout.journal.header == "libcore.io.DiskLruCache\n1\n1\n1\n\n")
        #expect(CoilLayout.journal.header == "libcore.io.DiskLruCache\n1\n3\n2\n\n")
        #expect(Coil2Layout.journal.header == "libcore.io.DiskLruCache\n1\n1\n2\n\n")
    }

    /// DIRTY (DiskLruCache.java:495-498), CLEAN with `getLengths()`'s
    /// " <len>" per value (574-578, 933-938), READ (458-461), REMOVE (630-633).
    @Test func lineFormats() {
        let key = String(repeating: "ab", count: 32)
        #expect(DiskLruJournal.dirtyLine(key) == "DIRTY \(key)\n")
        #expect(DiskLruJournal.cleanLine(key, lengths: [0, 5120]) == "CLEAN \(key) 0 5120\n")
        #expect(DiskLruJournal.cleanLine(key, lengths: [77]) == "CLEAN \(key) 77\n")
        #expect(DiskLruJournal.readLine(key) == "READ \(key)\n")
        #expect(DiskLruJournal.removeLine(key) == "REMOVE \(key)\n")
    }

    /// The sample journal of DiskLruCache.java:107-119 read as
    /// `readJournalLine` (313-350) reads it: 335c... is removed, then a READ
    /// line makes it an entry again (not readable: `lruEntries.get` then
    /// `put`, 332-336); order is the last line naming each key.
    @Test func parsesTheLibrarysSampleJournal() throws {
        let text = """
            libcore.io.DiskLruCache
            1
            100
            2

            CLEAN 3400330d1dfc7f3f7f4b8d4d803dfcf6 832 21054
            DIRTY 335c4c6028171cfddfbaae1a9c313c52
            CLEAN 335c4c6028171cfddfbaae1a9c313c52 3934 2342
            REMOVE 335c4c6028171cfddfbaae1a9c313c52
            DIRTY 1ab96a171faeeee38496d8b330771a7a
            CLEAN 1ab96a171faeeee38496d8b330771a7a 1600 234
            READ 335c4c6028171cfddfbaae1a9c313c52
            READ 3400330d1dfc7f3f7f4b8d4d803dfcf6

            """
        let contents = try DiskLruJournal(appVersion: 100, valueCount: 2).parse(Array(text.utf8))
        #expect(contents.lruOrder == ["1ab96a171faeeee38496d8b330771a7a", "335c4c6028171cfddfbaae1a9c313c52",
                                      "3400330d1dfc7f3f7f4b8d4d803dfcf6"])
        #expect(contents.entries["3400330d1dfc7f3f7f4b8d4d803dfcf6"]?.lengths == [832, 21054])
        #expect(contents.entries["335c4c6028171cfddfbaae1a9c313c52"]?.readable == false)
        #expect(contents.size == 832 + 21054 + 1600 + 234)
        // `redundantOpCount = lineCount - lruEntries.size()` (299).
        #expect(contents.redundantOpCount == 8 - 3)
        #expect(!contents.unterminatedTail)
    }

    /// What the library calls corrupt (and deletes the folder for): a
    /// header of another app version or value count (281-288), a line
    /// without a space, an unknown verb, a CLEAN with the wrong number of
    /// lengths (942-945) or a non-number (951-952). A cut last line is not
    /// corrupt: read up to it and rebuilt (301-303).
    @Test func corruptJournals() {
        let glide = GlideLayout.journal
        let key = String(repeating: "0", count: 64)
        let cases: [(String, Bool)] = [
            (CoilLayout.journal.header, true),           // Coil 3's header under Glide
            (Coil2Layout.journal.header, true),          // value count 2
            ("libcore.io.DiskLruCache\n1\n1\n1\n", true),  // cut header
            (glide.header + "BOGUS \(key)\n", true),
            (glide.header + "CLEAN\n", true),
            (glide.header + "CLEAN \(key) 1 2\n", true),
            (glide.header + "CLEAN \(key) x\n", true),
            (glide.header + "READ \(key) 1\n", true),
            (glide.header + "CLEAN \(key) 12\nREMO", false),
            (glide.header + "CLEAN \(key) 12\n", false),
        ]
        for (text, corrupt) in cases {
            let result = Result { try glide.parse(Array(text.utf8)) }
            switch result {
            case .success(let contents):
                #expect(!corrupt, "\(text.debugDescription) parsed")
                #expect(contents.unterminatedTail == text.hasSuffix("REMO"))
            case .failure:
                #expect(corrupt, "\(text.debugDescription) refused")
            }
        }
    }

    /// Glide `journalRebuildRequired` (DiskLruCache.java:601-605): >= 2000
    /// and >= entries; Coil `journalRewriteRequired` (Coil 3
    /// DiskLruCache.kt:515, 2.7.0 DiskLruCache.kt:512): >= 2000.
    @Test func rebuildThresholds() {
        #expect(GlideLayout.journal.rebuildRequired(redundantOpCount: 2000, entryCount: 2000))
        #expect(!GlideLayout.journal.rebuildRequired(redundantOpCount: 2000, entryCount: 2001))
        #expect(!GlideLayout.journal.rebuildRequired(redundantOpCount: 1999, entryCount: 0))
        #expect(CoilLayout.journal.rebuildRequired(redundantOpCount: 2000, entryCount: 50_000))
        #expect(!Coil2Layout.journal.rebuildRequired(redundantOpCount: 1999, entryCount: 0))
    }

    /// What `DiskLruIndex` appends, line for line, and what a rebuild
    /// leaves: one CLEAN per entry in LRU order (387-402), the backup gone
    /// (408-412).
    @Test func indexWritesTheLinesTheLibraryWrites() throws {
        let dir = makeTempDirectory("imgwarm-journal")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try StateFolders.makeDirectories(dir + "/.imgwarm/tmp")
        let layout = CoilLayout()
        let index = try #require(layout.makeBackend(directory: dir) as? DiskLruIndex)
        try index.open(writable: true)
        let facts = StoredResponse(url: "https://a/1.png", contentType: "image/png", etag: "\"e1\"",
                                  requestedAt: 1_700_000_000_000, receivedAt: 1_700_000_000_250)
        let names = ["https://a/1.png", "https://a/2.png"].map { layout.entryName(forKey: $0) }
        for name in names {
            try [UInt8](repeating: 7, count: 10).withUnsafeBytes {
                try index.store($0, as: name, response: facts, keepExisting: false)
            }
        }
        index.recordHit(names[0])
        try index.close()
        let keys = names.map { String($0.storedName.dropLast(2)) }
        let meta = CoilLayout.metadata(facts).count
        let journal = try String(contentsOfFile: dir + "/journal", encoding: .utf8)
        #expect(journal == CoilLayout.journal.header
            + "DIRTY \(keys[0])\nCLEAN \(keys[0]) \(meta) 10\n"
            + "DIRTY \(keys[1])\nCLEAN \(keys[1]) \(meta) 10\n"
            + "READ \(keys[0])\n")
        #expect(FileManager.default.contents(atPath: dir + "/\(keys[1]).1") == Data(repeating: 7, count: 10))
        #expect(index.existingEntry(for: names[1])?.path == dir + "/\(keys[1]).1")
        // keepExisting: `DiskLruCacheWrapper.put` keeps what is there (147-150).
        try [UInt8](repeating: 9, count: 3).withUnsafeBytes {
            try index.store($0, as: names[1], response: nil, keepExisting: true)
        }
        #expect(FileManager.default.contents(atPath: dir + "/\(keys[1]).1") == Data(repeating: 7, count: 10))
        // A prune to one entry removes the least recently used (keys[1]:
        // keys[0] was read after it) and appends REMOVE.
        let result = try index.prune(PruneOptions(layout: layout, maxSize: UInt64(meta + 10)))
        #expect(result.removed.map(\.path) == [dir + "/\(keys[1]).1"])
        #expect(result.removals.map { result.path(of: $0) } == ["\(keys[1]).1"] && result.trimmed == 1)
        #expect(!FileManager.default.fileExists(atPath: dir + "/\(keys[1]).0"))
        let after = try String(contentsOfFile: dir + "/journal", encoding: .utf8)
        #expect(after.hasSuffix("READ \(keys[0])\nREMOVE \(keys[1])\n"))
        // A new open of a journal with a cut tail rebuilds it.
        FileManager.default.createFile(atPath: dir + "/journal", contents: Data((after + "DIRTY 12").utf8))
        let again = try #require(layout.makeBackend(directory: dir) as? DiskLruIndex)
        try again.open(writable: true)
        #expect(try String(contentsOfFile: dir + "/journal", encoding: .utf8)
            == CoilLayout.journal.header + "CLEAN \(keys[0]) \(meta) 10\n")
        #expect(!FileManager.default.fileExists(atPath: dir + "/journal.bkp"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/journal.tmp"))
    }

    /// The rebuild comes when the library's comes: Glide at the 2,000th
    /// redundant line when there are no more entries than that
    /// (DiskLruCache.java:601-605; a new entry's DIRTY line is one), and what
    /// it leaves is one CLEAN line per entry that OkHttp's DiskLruCache reads
    /// back whole.
    @Test func journalIsRebuiltAtTheLibrarysThresholdAndStaysReadable() throws {
        let dir = makeTempDirectory("imgwarm-journal-rebuild")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try StateFolders.makeDirectories(dir + "/.imgwarm/tmp")
        let layout = GlideLayout()
        let index = try #require(layout.makeBackend(directory: dir) as? DiskLruIndex)
        try index.open(writable: true)
        func store(_ i: Int) throws {
            try Array("image \(i)".utf8).withUnsafeBytes {
                try index.store($0, as: layout.entryName(forKey: "https://a/\(i)"), response: nil, keepExisting: false)
            }
        }
        for i in 0..<1999 { try store(i) }
        var lines = try String(contentsOfFile: dir + "/journal", encoding: .utf8).split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("DIRTY ") }.count == 1999)
        try store(1999)
        lines = try String(contentsOfFile: dir + "/journal", encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4 + 2000)  // the header (its blank line split away) and one CLEAN each
        #expect(lines.dropFirst(4).allSatisfy { $0.hasPrefix("CLEAN ") })
        #expect(!FileManager.default.fileExists(atPath: dir + "/journal.bkp"))
        // READ lines count too: 2,000 reads of 2,000 entries rebuild again.
        for i in 0..<2000 { index.recordHit(layout.entryName(forKey: "https://a/\(i)")) }
        try index.close()
        lines = try String(contentsOfFile: dir + "/journal", encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4 + 2000 && lines.dropFirst(4).allSatisfy { $0.hasPrefix("CLEAN ") })
        let reader = try DiskLruReader.needed()
        let reading = try reader.read(dir, appVersion: 1, valueCount: 1)
        #expect(reading.status == 0 && !reading.stderr.contains("corrupt"), "\(reading.stderr)")
        #expect(reading.entries.count == 2000)
        #expect(reading.entries[GlideLayout.diskKey("https://a/7")]?.first?.length == "image 7".utf8.count)
    }

    /// `experimentalOpen` (DiskLruCache.java:235-245): a backup without a
    /// journal becomes the journal; with one it is deleted.
    @Test func backupJournalHandling() throws {
        let dir = makeTempDirectory("imgwarm-journal-bkp")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let key = String(repeating: "c", count: 64)
        let text = GlideLayout.journal.header + "CLEAN \(key) 3\n"
        FileManager.default.createFile(atPath: dir + "/journal.bkp", contents: Data(text.utf8))
        FileManager.default.createFile(atPath: dir + "/\(key).0", contents: Data([1, 2, 3]))
        let index = try #require(GlideLayout().makeBackend(directory: dir) as? DiskLruIndex)
        try index.open(writable: true)
        #expect(try String(contentsOfFile: dir + "/journal", encoding: .utf8) == text)
        #expect(!FileManager.default.fileExists(atPath: dir + "/journal.bkp"))
        #expect(index.existingEntry(for: CacheEntryName(storedName: key + ".0"))?.size == 3)
        FileManager.default.createFile(atPath: dir + "/journal.bkp", contents: Data("stale".utf8))
        try GlideLayout().makeBackend(directory: dir).open(writable: true)
        #expect(!FileManager.default.fileExists(atPath: dir + "/journal.bkp"))
    }

    /// A journal of another app version is an error, and left as it is.
    @Test func journalOfAnotherVersionIsNotOverwritten() throws {
        let dir = makeTempDirectory("imgwarm-journal-other")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = Coil2Layout.journal.header + "CLEAN \(String(repeating: "d", count: 64)) 0 4\n"
        FileManager.default.createFile(atPath: dir + "/journal", contents: Data(text.utf8))
        let index = CoilLayout().makeBackend(directory: dir)
        #expect(throws: ImgWarmError.self) { try index.open(writable: true) }
        #expect(try String(contentsOfFile: dir + "/journal", encoding: .utf8) == text)
    }

    // MARK: Coil metadata

    /// `CacheNetworkResponse.writeTo` (CacheNetworkResponse.kt:31-46): code,
    /// request and response millis, the header line count, `name:value`
    /// lines; read back as `readFrom` (14-29) reads it, `append` splitting at
    /// the first ':' (coil3/network/internal/utils.kt:9-13).
    @Test func coil3MetadataReadsBackAsCoilReadsIt() throws {
        let facts = StoredResponse(url: "https://x/y.png", contentType: "image/png", etag: "W/\"1:2\"",
                                  cacheControl: "max-age=60", date: "Wed, 25 Nov 2026 10:00:00 GMT",
                                  requestedAt: 1_764_064_800_000, receivedAt: 1_764_064_800_120)
        let text = String(decoding: CoilLayout.metadata(facts), as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.removeLast() == "")  // ends with a newline
        #expect(Int(lines[0]) == 200)
        #expect(Int64(lines[1]) == 1_764_064_800_000)
        #expect(Int64(lines[2]) == 1_764_064_800_120)
        let count = try #require(Int(lines[3]))
        #expect(count == lines.count - 4)
        var headers: [String: String] = [:]
        for line in lines[4...] {
            let colon = try #require(line.firstIndex(of: ":"))
            headers[line[..<colon].trimmingCharacters(in: .whitespaces)] = String(line[line.index(after: colon)...])
        }
        #expect(headers == ["content-type": "image/png", "etag": "W/\"1:2\"", "cache-control": "max-age=60",
                            "date": "Wed, 25 Nov 2026 10:00:00 GMT"])
        // Coil 2's is empty: HttpUriFetcher.kt:45-52 (2.7.0) serves it as
        // a manual write; see Coil2Layout.
        #expect(Coil2Layout.journal.valueCount == 2)
    }

    // MARK: flutter_cache_manager

    /// `HttpGetResponse.validTill` (file_service.dart:87-108).
    @Test(arguments: [
        (nil, 7 * 86_400),
        ("max-age=60", 60),
        ("public, MAX-AGE=120", 120),
        ("no-cache", 0),
        ("no-cache, max-age=30", 30),
        ("max-age=30, no-cache", 0),
        ("max-age=0", 7 * 86_400),       // `validSeconds > 0` only
        ("max-age=abc", 7 * 86_400),     // `int.tryParse ?? 0`
        ("s-maxage=99", 7 * 86_400),
    ] as [(String?, Int64)])
    func flutterValidTill(header: String?, seconds: Int64) {
        #expect(FlutterLayout.validTill(cacheControl: header, receivedAt: 1_000_000) == 1_000_000 + seconds * 1000)
    }

    /// `fileExtension` (file_service.dart:115-123) through
    /// `ContentTypeConverter` (mime_converter.dart:5, table rows 70-77).
    @Test(arguments: [
        ("image/png", ".png"), ("image/jpeg", ".jpg"), ("image/svg+xml", ".svg"), ("image/webp", ".webp"),
        ("IMAGE/GIF; charset=binary", ".gif"), ("image/avif", ".avif"), ("image/heic", ".heic"),
        ("application/octet-stream", ".bin"),
    ])
    func flutterFileExtension(contentType: String, ext: String) {
        #expect(FlutterLayout.fileExtension(contentType: contentType) == ext)
        #expect(FlutterLayout.fileExtension(contentType: nil) == "")
    }

    /// `Uuid().v1()` (web_helper.dart:171): version 1, RFC 4122 variant,
    /// the time in 100 ns since 1582-10-15 split low-mid-high.
    @Test func flutterFileNamesAreVersion1UUIDs() throws {
        // 1970-01-01T00:00:00Z is 0x01B21DD213814000 in UUID time.
        let uuid = FlutterLayout.uuidV1(timestamp100ns: 0, clockSequence: 0x1234, node: 0x0000_AABB_CCDD_EEFF)
        #expect(uuid == "13814000-1dd2-11b2-9234-abbbccddeeff")
        let pattern = try Regex("[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
        #expect(uuid.wholeMatch(of: pattern) != nil)
        #expect(FlutterLayout.defaultMaxObjects == 200 && FlutterLayout.defaultStalePeriod == 30 * 86_400)  // _config_io.dart:14-15
        #expect(FlutterLayout.storeKey == "libCachedImageData")  // default_cache_manager.dart:7
    }
}
