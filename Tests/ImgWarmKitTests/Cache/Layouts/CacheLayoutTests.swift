import CFileScan
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
#if canImport(Glibc)
import Glibc
#endif

/// The three layouts' names, dates and settings, each checked against a
/// value derived from the library's own source (cited per test) and, for
/// hashes, computed here by another implementation (coreutils) than the
/// one the layout uses.
@Suite struct CacheLayoutTests {
    /// Keys as apps produce them (`absoluteString`): plain, with query and
    /// fragment, percent-encoded, an extension, and a non-URL key with
    /// non-ASCII text.
    static let keys = [
        "https://example.com/images/photo.jpg",
        "https://example.com/images/photo.png?size=large&v=2",
        "https://example.com/avatar/12345",
        "https://cdn.example.com/x/caf%C3%A9.jpg#frag",
        "http://127.0.0.1:8080/a/b/c.webp",
        "custom key é 图",
    ]

    /// The hex digest by coreutils (`sha256sum`, `sha1sum`); coreutils is
    /// on every machine this runs on, so a missing tool fails the test.
    static func digest(_ tool: String, _ key: String) throws -> String {
        let hex = coreutilsDigest(tool, of: key)
        return try #require(hex, "\(tool) (coreutils) is needed to check names independently")
    }

    // MARK: Names

    /// Kingfisher `Sources/Cache/DiskStorage.swift`, `cacheFileName(forKey:forcedExtension:)`:
    /// `key.kf.sha256` (`Sources/Utility/String+SHA256.swift`, `sha256`:
    /// `SHA256.hash` of the UTF-8 data, `%02x` per byte), no extension
    /// (`pathExtension` nil, `autoExtAfterHashedFileName` false by default).
    @Test(arguments: keys)
    func kingfisherNameIsSHA256OfTheKey(key: String) throws {
        let name = KingfisherLayout().entryName(forKey: key)
        #expect(name.storedName == (try Self.digest("sha256sum", key)))
        #expect(name.lookupNames == [name.storedName])
    }

    /// Nuke `Sources/Nuke/Caching/DataCache.swift`, `DataCache.filename(for:)`:
    /// `key.sha1` (`Sources/Nuke/Internal/Extensions.swift`, `sha1`:
    /// `Insecure.SHA1.hash` of the UTF-8 data, `%02x` per byte).
    @Test(arguments: keys)
    func nukeNameIsSHA1OfTheKey(key: String) throws {
        let name = NukeLayout().entryName(forKey: key)
        #expect(name.storedName == (try Self.digest("sha1sum", key)))
        #expect(name.lookupNames == [name.storedName])
    }

    /// Nuke's own documented example, in the doc comment of `String.sha1`
    /// (`Sources/Nuke/Internal/Extensions.swift`).
    @Test func nukeDocumentedExample() {
        #expect(NukeLayout().entryName(forKey: "http://test.com").storedName == "50334ee0b51600df6397ce93ceed4728c37fee4e")
    }

    /// The FIPS 180-2 test vectors for "abc": the hashes are the standard
    /// ones, in lowercase hex as both libraries spell them.
    @Test func standardVectors() {
        #expect(KingfisherLayout().entryName(forKey: "abc").storedName
            == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(NukeLayout().entryName(forKey: "abc").storedName == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    /// The SDWebImage layout is `CacheFileName` (SDWebImage's
    /// `SDDiskCacheFileNameForKey`) unchanged.
    @Test(arguments: keys)
    func sdWebImageNameIsCacheFileName(key: String) {
        let name = SDWebImageLayout().entryName(forKey: key)
        #expect(name.storedName == CacheFileName(key: key).storedName)
        #expect(name.lookupNames == CacheFileName(key: key).lookupNames)
    }

    @Test func sdWebImageExampleFromTheContract() {
        let name = SDWebImageLayout().entryName(forKey: "https://example.com/images/photo.jpg")
        #expect(name.storedName == "b46ca04023feeac3addabe8e574e2211.jpg")
        #expect(name.lookupNames == ["b46ca04023feeac3addabe8e574e2211.jpg", "b46ca04023feeac3addabe8e574e2211"])
    }

    // MARK: Folders

    /// Kingfisher `DiskStorage.Creation.init`: `com.onevcat.Kingfisher.ImageCache.\(config.name)`
    /// with `ImageCache.default`'s name "default"; Nuke
    /// `ImagePipeline.Configuration.withDataCache(name:)`'s default name
    /// `com.github.kean.Nuke.DataCache`; both under the caches directory.
    @Test func defaultFoldersUnderXDGCacheHome() {
        let xdg = ["XDG_CACHE_HOME": "/srv/c", "HOME": "/home/u"]
        #expect(CacheLocation.defaultDirectory(layout: .sdwebimage, environment: xdg) == "/srv/c/com.hackemist.SDImageCache/default")
        #expect(CacheLocation.defaultDirectory(layout: .kingfisher, environment: xdg) == "/srv/c/com.onevcat.Kingfisher.ImageCache.default")
        #expect(CacheLocation.defaultDirectory(layout: .nuke, environment: xdg) == "/srv/c/com.github.kean.Nuke.DataCache")
        #expect(CacheLocation.defaultDirectory(layout: .nuke, environment: ["HOME": "/home/u"]) == "/home/u/.cache/com.github.kean.Nuke.DataCache")
        // IMGWARM_CACHE names the folder itself, whatever the layout.
        #expect(CacheLocation.defaultDirectory(layout: .kingfisher, environment: ["IMGWARM_CACHE": "/c", "HOME": "/h"]) == "/c")
    }

    // MARK: Kingfisher dates

    static func at(_ seconds: Int, _ nanoseconds: Int = 0) -> timespec { timespec(tv_sec: seconds, tv_nsec: nanoseconds) }

    /// Kingfisher `DiskStorage.Backend.store(value:forKey:expiration:...)`:
    /// modification date = `expiration.estimatedExpirationSinceNow.fileAttributeDate`,
    /// where `fileAttributeDate` is `ceil` of the seconds
    /// (`Sources/Utility/ExtensionHelpers.swift`) and `.days(7)` is
    /// 7 x 86,400 s (`Storage.swift`, `StorageExpiration.estimatedExpirationSince`).
    @Test(arguments: [
        // (now s, now ns, expiration, deadline)
        (1_800_000_000, 0, KingfisherLayout.defaultExpiration, 1_800_604_800),
        (1_800_000_000, 1, KingfisherLayout.defaultExpiration, 1_800_604_801),
        (1_800_000_000, 999_999_999, KingfisherLayout.defaultExpiration, 1_800_604_801),
        (1_800_000_000, 250_000_000, .seconds(3600), 1_800_003_601),
        (1_800_000_000, 500_000_000, .seconds(0.5), 1_800_000_001),
        (1_800_000_000, 600_000_000, .seconds(0.5), 1_800_000_002),
        // `.never`: `Date.distantFuture`, 4001-01-01T00:00:00Z.
        (1_800_000_000, 0, .never, 64_092_211_200),
        // Long expirations: 12500 weeks (over 9.2e18 ns with now added, which
        // trapped), and past distantFuture (1e300 s), which is distantFuture.
        (1_800_000_000, 0, .seconds(12500 * 604_800), 9_360_000_000),
        (1_800_000_000, 0, .seconds(1e300), 64_092_211_200),
    ] as [(Int, Int, KingfisherLayout.Expiration, Int)])
    func kingfisherDeadlineIsNowPlusExpirationRoundedUp(now: Int, nanoseconds: Int,
                                                        expiration: KingfisherLayout.Expiration, deadline: Int) throws {
        let times = try #require(KingfisherLayout(expiration: expiration).fileTimes(storedAt: Self.at(now, nanoseconds)))
        #expect(times.modification.tv_sec == deadline && times.modification.tv_nsec == 0)
        #expect(times.access.tv_sec == now && times.access.tv_nsec == nanoseconds)
    }

    @Test func distantFutureIsFoundationsDistantFuture() {
        #expect(Double(KingfisherLayout.distantFuture) == Date.distantFuture.timeIntervalSince1970)
    }

    /// Kingfisher `DiskStorage.FileMeta.expired(referenceDate:)`:
    /// `estimatedExpirationDate.isPast(referenceDate:)`, i.e.
    /// `timeIntervalSince(referenceDate) <= 0`: at the deadline a file is
    /// already expired.
    @Test func kingfisherFileAtItsDeadlineIsNoHit() {
        var st = stat()
        st.st_mtim = Self.at(1_800_000_000)
        let layout = KingfisherLayout()
        let deadline: Int64 = 1_800_000_000 * 1_000_000_000
        #expect(!layout.isLive(st, now: deadline))
        #expect(!layout.isLive(st, now: deadline + 1))
        #expect(layout.isLive(st, now: deadline - 1))
        // The other libraries keep no deadline: any file is a hit.
        #expect(SDWebImageLayout().isLive(st, now: deadline + 1))
        #expect(NukeLayout().isLive(st, now: deadline + 1))
    }

    /// SDWebImage and Nuke write plain files: the kernel's dates (now).
    @Test func sdWebImageAndNukeKeepTheKernelsDates() {
        #expect(SDWebImageLayout().fileTimes(storedAt: Self.at(1)) == nil)
        #expect(NukeLayout().fileTimes(storedAt: Self.at(1)) == nil)
    }

    /// What an app reading the folder sees after a store, and after the
    /// deadline: the dates on disk, the birth time as statx reports it, and
    /// the lookup that treats a file past its deadline as missing.
    @Test func kingfisherStoreSetsTheDeadlineAndExpiredFilesAreMisses() throws {
        let f = try PruneFixture()
        let cache = DiskCache(directory: f.directory, layout: KingfisherLayout(expiration: .seconds(3600)))
        try cache.prepare()
        let key = "https://example.com/a.png"
        let before = CachePruner.clockNow()
        let path = try cache.store([UInt8](repeating: 1, count: 100), for: cache.fileName(forKey: key))
        let after = CachePruner.clockNow()
        #expect(path == f.directory + "/" + (try Self.digest("sha256sum", key)))
        var info = imgwarm_stat()
        try #require(imgwarm_statat(AT_FDCWD, path, &info) == 0)
        // Deadline: ceil(store time + 1 h), whole seconds.
        #expect(info.mtime_ns % 1_000_000_000 == 0)
        #expect(info.mtime_ns >= before + 3_600_000_000_000 && info.mtime_ns < after + 3_601_000_000_000)
        if info.has_btime != 0 {
            // Linux cannot set a birth time: the kernel's, taken at the
            // temp file's creation during the store, is the "last access".
            #expect(info.btime_ns >= before - 1_000_000_000 && info.btime_ns <= after + 1_000_000_000)
        }
        #expect(cache.existingPath(forKey: key) == path)

        // Past the deadline: no entry, as for Kingfisher's `value(forKey:)`.
        f.setTimes((path as NSString).lastPathComponent, atime: after, mtime: after - 1)
        #expect(cache.existingPath(forKey: key) == nil)
        // A revalidation renews the deadline.
        cache.renewAccessTime(path: path)
        #expect(cache.existingPath(forKey: key) == path)
        try #require(imgwarm_statat(AT_FDCWD, path, &info) == 0)
        #expect(info.mtime_ns > CachePruner.clockNow() + 3_500_000_000_000)
    }

    // MARK: Prune settings

    /// Nuke `DataCache`: `sizeLimit = 1024 * 1024 * 150`, `trimRatio = 0.7`,
    /// target `Int(Double(sizeLimit) * trimRatio)`.
    @Test func nukeDefaults() throws {
        let policy = try PruneOptions(layout: NukeLayout()).policy(now: 0)
        #expect(policy.limit == 157_286_400)
        #expect(policy.target == 110_100_480)
        #expect(policy.expiry == .none && policy.trimDate == .access && policy.size == .allocated)
        #expect(!policy.walksSubfolders)
        let custom = try PruneOptions(layout: NukeLayout(), maxSize: 1001, trimRatio: 0.5).policy(now: 0)
        #expect(custom.target == 500)
    }

    /// Kingfisher `removeSizeExceededValues`: `target = config.sizeLimit / 2`
    /// (integer), logical `fileSizeKey`, ordered by `creationDate`.
    @Test func kingfisherSettings() throws {
        let policy = try PruneOptions(layout: KingfisherLayout(), maxSize: 1001).policy(now: 7)
        #expect(policy.target == 500)
        #expect(policy.expiry == .deadlinePassed(now: 7) && policy.trimDate == .creation && policy.size == .logical)
        let noLimit = try PruneOptions(layout: KingfisherLayout()).policy(now: 7)
        #expect(!noLimit.needsTrim(UInt64.max))
    }

    /// Options a layout has no notion of are usage errors, not ignored.
    @Test(arguments: [
        PruneOptions(layout: KingfisherLayout(), maxAge: 60),
        PruneOptions(layout: KingfisherLayout(), expireType: .access),
        PruneOptions(layout: KingfisherLayout(), maxSize: 10, trimRatio: 0.5),
        PruneOptions(layout: NukeLayout(), maxAge: 60),
        PruneOptions(layout: NukeLayout(), expireType: .modification),
        PruneOptions(layout: NukeLayout(), trimRatio: 0),
        PruneOptions(layout: NukeLayout(), maxSize: 0),
        PruneOptions(layout: SDWebImageLayout()),
        PruneOptions(layout: SDWebImageLayout(), maxSize: 1, trimRatio: 1.5),
    ])
    func usageErrors(options: PruneOptions) {
        #expect(throws: ImgWarmError.self) { try options.validate() }
    }

    /// Each library's comparisons at the limit and at the target.
    @Test func triggerAndStopBoundaries() throws {
        let sd = try PruneOptions(maxSize: 100).policy(now: 0)          // > limit, < target
        #expect(!sd.needsTrim(100) && sd.needsTrim(101))
        #expect(!sd.reachedTarget(50) && sd.reachedTarget(49))
        let kf = try PruneOptions(layout: KingfisherLayout(), maxSize: 100).policy(now: 0)  // >= limit, <= target
        #expect(!kf.needsTrim(99) && kf.needsTrim(100))
        #expect(kf.reachedTarget(50) && !kf.reachedTarget(51))
        let nuke = try PruneOptions(layout: NukeLayout(), maxSize: 100).policy(now: 0)     // > limit, <= target
        #expect(!nuke.needsTrim(100) && nuke.needsTrim(101))
        #expect(nuke.reachedTarget(70) && !nuke.reachedTarget(71))
    }

    /// The warm pipeline's layout-specific steps are the layout's hooks:
    /// flutter refuses a URL with userinfo as its own key and keeps the URL
    /// without it (flutter_cache_manager keys a row by the URL and stores
    /// it in the `url` column); OkHttp's entry holds the URL its key is
    /// made of (okhttp Cache.kt `Entry.matches`); the others keep the URL.
    @Test func layoutHooksOfTheWarmPipeline() {
        let plain = "https://cdn.example/a.png", secret = "https://u:p@cdn.example/a.png"
        for kind in CacheLayoutKind.allCases {
            let layout = kind.layout()
            #expect(layout.refusal(url: plain, key: plain) == nil, "\(kind)")
            #expect((layout.refusal(url: secret, key: secret) != nil) == (kind == .flutter), "\(kind)")
            #expect(layout.refusal(url: secret, key: "app-key") == nil, "\(kind)")
            let stored = layout.storedURL(url: secret, key: "the-key")
            switch kind {
            case .flutter: #expect(stored == plain)
            case .okhttp: #expect(stored == "the-key")
            default: #expect(stored == secret, "\(kind)")
            }
        }
    }
}
