import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// How a folder's layout is told (record, index, names, folder name,
/// default) and each layout's name rule. The rules follow the libraries:
/// SDWebImage `SDDiskCache cachedFileNameForKey:` (MD5 hex plus the URL's
/// extension), Kingfisher `DiskStorage.cacheFileName` (SHA-256 hex, plus
/// `pathExtension` when set), Nuke `DataCache.filename(for:)` (SHA-1 hex),
/// DiskLruCache `Entry.getCleanFile`/`getDirtyFile` (`key.i`, `key.i.tmp`,
/// bumptech/glide third_party/disklrucache DiskLruCache.java), and
/// flutter_cache_manager `Uuid().v1()` plus the extension in
/// `libCachedImageData/` (lib/src/cache_store.dart, web_helper.dart).
@Suite struct LayoutDetectionTests {
    static let md5 = String(repeating: "0", count: 31) + "f"
    static let sha1 = String(repeating: "1", count: 40)
    static let sha256 = String(repeating: "a", count: 64)
    static let uuid = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"

    @Test func eachLayoutKnowsItsNames() {
        let md5 = Self.md5, sha1 = Self.sha1, sha256 = Self.sha256, uuid = Self.uuid
        let fits: [(CacheLayoutKind, String, String, Bool)] = [
            (.sdwebimage, "", md5, true), (.sdwebimage, "", md5 + ".jpg", true), (.sdwebimage, "sub", md5 + ".png", true),
            (.sdwebimage, "", sha256, false), (.sdwebimage, "", "notes.txt", false), (.sdwebimage, "", md5.uppercased(), false),
            (.kingfisher, "", sha256, true), (.kingfisher, "", sha256 + ".png", true), (.kingfisher, "", sha256 + ".0", false),
            (.kingfisher, "", md5, false),
            (.nuke, "", sha1, true), (.nuke, "", md5, false), (.nuke, "sub", sha1, false),
            (.glide, "", sha256 + ".0", true), (.glide, "", sha256 + ".0.tmp", true), (.glide, "", sha256 + ".1", false),
            (.glide, "", "journal", true), (.glide, "", "journal.bkp", true), (.glide, "", sha256, false),
            (.coil, "", sha256 + ".1", true), (.coil, "", sha256 + ".2", false), (.coil2, "", sha256 + ".0", true),
            (.flutter, "", "libCachedImageData.db", true), (.flutter, "", "libCachedImageData.db-wal", true),
            (.flutter, "libCachedImageData", uuid + ".jpg", true), (.flutter, "libCachedImageData", uuid, true),
            (.flutter, "", uuid + ".jpg", false), (.flutter, "libCachedImageData", "x.jpg", false),
        ]
        for (kind, folder, name, expected) in fits {
            #expect(kind.fitsName(name, inFolder: folder) == expected, "\(kind) \(folder)/\(name)")
        }
    }

    /// The journal headers the libraries write (`DiskLruCacheWrapper`
    /// APP_VERSION 1, VALUE_COUNT 1; Coil 3 `RealDiskCache` 3, 2; Coil 2.7.0 1, 2).
    @Test func indexKindsAreTheLibrariesHeaders() {
        #expect(CacheLayoutKind.glide.indexKind == .diskLruJournal(appVersion: 1, valueCount: 1))
        #expect(CacheLayoutKind.coil.indexKind == .diskLruJournal(appVersion: 3, valueCount: 2))
        #expect(CacheLayoutKind.coil2.indexKind == .diskLruJournal(appVersion: 1, valueCount: 2))
        #expect(CacheLayoutKind.flutter.indexKind == .flutterDatabase)
        #expect(CacheLayoutKind.nuke.indexKind == CacheIndexKind.none)
    }

    @Test func journalHeadersAreParsedStrictly() {
        func header(_ s: String) -> CacheFolderSurvey.JournalHeader? { CacheFolderSurvey.parseJournalHeader(Array(s.utf8)) }
        #expect(header("libcore.io.DiskLruCache\n1\n3\n2\n\nCLEAN x 1 2\n") == .init(appVersion: 3, valueCount: 2))
        #expect(header("libcore.io.DiskLruCache\n1\n201105\n2\n\n") == .init(appVersion: 201105, valueCount: 2))
        #expect(header("libcore.io.DiskLruCache\n2\n1\n1\n\n") == nil)
        #expect(header("libcore.io.DiskLruCache\n1\n1\n1\nx\n") == nil)
        #expect(header("libcore.io.DiskLruCache\n1\n1\n") == nil)
        #expect(header("hello\n1\n1\n1\n\n") == nil)
    }

    @Test func flutterDatabasesAreToldByTheirSchema() {
        var page = Array("SQLite format 3".utf8) + [0] + [UInt8](repeating: 0, count: 200)
        #expect(!CacheFolderSurvey.isFlutterDatabase(page))
        page += Array("CREATE TABLE cacheObject (_id integer primary key, url text)".utf8)
        #expect(CacheFolderSurvey.isFlutterDatabase(page))
        #expect(!CacheFolderSurvey.isFlutterDatabase(Array("create table cacheObject".utf8) + [UInt8](repeating: 0, count: 200)))
    }

    static func survey(record: String? = nil, journal: (Int, Int)? = nil, flutter: Bool = false, names: [String] = []) -> CacheFolderSurvey {
        var s = CacheRecognitionTests.survey(journal: journal, flutter: flutter, names: names)
        s.recordedLayout = record
        return s
    }

    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var survey: CacheFolderSurvey
        var path: String
        var expected: LayoutDetection.Outcome
        var description: String { name }
    }

    static let rows: [Row] = [
        Row(name: "record wins over names", survey: survey(record: "kingfisher", names: [md5]), path: "/c",
            expected: .detected(.kingfisher, because: "the layout recorded in .imgwarm/layout")),
        Row(name: "glide journal", survey: survey(journal: (1, 1)), path: "/c/image_cache", expected: .detected(.glide, because: "its index")),
        Row(name: "coil journal", survey: survey(journal: (3, 2)), path: "/c", expected: .detected(.coil, because: "its index")),
        Row(name: "coil2 journal", survey: survey(journal: (1, 2)), path: "/c", expected: .detected(.coil2, because: "its index")),
        Row(name: "flutter database", survey: survey(flutter: true), path: "/c", expected: .detected(.flutter, because: "its index")),
        Row(name: "sdwebimage names", survey: survey(names: [md5 + ".jpg"]), path: "/c", expected: .detected(.sdwebimage, because: "the names of its files")),
        Row(name: "kingfisher names", survey: survey(names: [sha256]), path: "/c", expected: .detected(.kingfisher, because: "the names of its files")),
        Row(name: "nuke names", survey: survey(names: [sha1]), path: "/c", expected: .detected(.nuke, because: "the names of its files")),
        // Value 0 alone is Glide's and Coil's metadata file alike.
        Row(name: "value 0 files without a journal", survey: survey(names: [sha256 + ".0"]), path: "/c",
            expected: .tie([.glide, .coil, .coil2], because: "the names of its files")),
        Row(name: "coil value files without a journal", survey: survey(names: [sha256 + ".0", sha256 + ".1"]), path: "/c",
            expected: .tie([.coil, .coil2], because: "the names of its files")),
        Row(name: "kingfisher folder name", survey: survey(), path: "/x/com.onevcat.Kingfisher.ImageCache.default",
            expected: .detected(.kingfisher, because: "its folder name")),
        Row(name: "glide folder name", survey: survey(), path: "/x/image_manager_disk_cache/",
            expected: .detected(.glide, because: "its folder name")),
        Row(name: "image_cache with no index", survey: survey(), path: "/x/image_cache", expected: .tie([.coil, .coil2, .fresco], because: "its folder name")),
        Row(name: "nothing to go by", survey: survey(names: ["notes.txt"]), path: "/x/y", expected: .detected(.sdwebimage, because: "the default")),
    ]

    @Test(arguments: rows) func detection(_ row: Row) {
        #expect(LayoutDetection.detect(row.survey, path: row.path) == row.expected)
    }

    @Test func aNamedLayoutTheFolderContradictsIsSaid() {
        #expect(LayoutDetection.contradiction(Self.survey(journal: (1, 1)), asked: .nuke)?.0 == [.glide])
        #expect(LayoutDetection.contradiction(Self.survey(journal: (1, 1)), asked: .glide) == nil)
        #expect(LayoutDetection.contradiction(Self.survey(names: [Self.sha256 + ".1"]), asked: .coil2) == nil)
        #expect(LayoutDetection.contradiction(Self.survey(names: ["notes.txt"]), asked: .nuke) == nil)
        #expect(LayoutDetection.contradiction(Self.survey(record: "sdwebimage"), asked: .kingfisher)?.0 == [.sdwebimage])
    }
}
