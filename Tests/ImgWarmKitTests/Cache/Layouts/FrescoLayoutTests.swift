import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// `--layout fresco`, from facebook/fresco (imagepipeline-base/.../cache/disk/
/// and cache/common/, fbcore SecureHashUtil), cited per constant.
@Suite struct FrescoLayoutTests {
    /// DefaultDiskStorage.java (v3.6.0) getVersionSubdirectoryName:143-149,
    /// "%s.ols%d.%d" of DEFAULT_DISK_STORAGE_VERSION_PREFIX "v2",
    /// SHARDING_BUCKET_COUNT = 100 (:58), DiskCacheConfig.Builder mVersion = 1
    /// (:144), mBaseDirectoryName "image_cache" (:145), mMaxCacheSize 40 MB (:147);
    /// DiskStorageCache.java FUTURE_TIMESTAMP_THRESHOLD_MS = 2 h (:51).
    @Test func constants() {
        #expect(FrescoLayout.versionFolder == "v2.ols100.1")
        #expect(CacheLayoutKind.fresco.defaultFolder == "image_cache")
        #expect(FrescoLayout.defaultSizeLimit == 40 * 1024 * 1024)
        #expect(FrescoLayout.futureThresholdNanoseconds == 7_200_000_000_000)
    }

    /// SecureHashUtil.kt makeSHA1HashBase64:69-74 (URL_SAFE | NO_PADDING |
    /// NO_WRAP) over CacheKeyUtil.kt secureHashKey:57-58 (uriString as
    /// UTF-8); the values are what Java's MessageDigest, Base64 URL encoder
    /// without padding and String.hashCode give (checked by FrescoRead.java
    /// in the end-to-end test).
    @Test func resourceIdAndShard() {
        let id = FrescoLayout.resourceId("http://127.0.0.1:18777/a.png")
        #expect(id == "xDvXTlP1jpB79MpdVm2wbBAjmiY")
        #expect(FrescoLayout.shard(id, .integer) == "14")
        #expect(FrescoLayout.shard(id, .decimal) == "14.0")
        #expect(FrescoLayout().entryName(forKey: "http://127.0.0.1:18777/a.png").storedName == id + ".cnt")
        // String.hashCode of "Aa" and "BB" is 2112; a negative hash keeps its
        // sign under Java's % before Math.abs.
        #expect(FrescoLayout.javaHashCode("Aa") == 2112 && FrescoLayout.javaHashCode("BB") == 2112)
        #expect(FrescoLayout.javaHashCode("polygenelubricants") == Int32.min)
        #expect(FrescoLayout.shard("polygenelubricants", .integer) == "48")
    }

    /// DefaultDiskStorage.java:220 `String.valueOf(Math.abs(...))` up to
    /// 3.6.0; DefaultDiskStorage.kt (v3.7.0):155 `abs(....toDouble()).toString()`.
    @Test func versionNamesTheShards() {
        #expect(FrescoLayout.shardNames(forVersion: "3.4") == .integer)
        #expect(FrescoLayout.shardNames(forVersion: "3.6.0") == .integer)
        #expect(FrescoLayout.shardNames(forVersion: "3.7.0") == .decimal)
        #expect(FrescoLayout.shardNames(forVersion: "4.0") == .decimal)
        #expect(FrescoLayout.shardNames(forVersion: "three") == nil)
        #expect(FrescoCacheIndex.isShard("22", .integer) && !FrescoCacheIndex.isShard("22.0", .integer))
        #expect(FrescoCacheIndex.isShard("22.0", .decimal) && !FrescoCacheIndex.isShard("022", .integer))
        #expect(!FrescoCacheIndex.isShard("100", .integer))
    }

    /// DiskStorageCache.java: above the limit, evictAboveSize(limit * 9 / 10)
    /// (:481-483) removes entries while the bytes removed are at most the
    /// excess (:507-509), in getSortedEntries order (:540-553): beyond
    /// now + 2 h first, then DefaultEntryEvictionComparatorSupplier's oldest first.
    @Test func evictionOrder() {
        let now: Int64 = 1_000_000 * 1_000_000_000
        let hour: Int64 = 3600 * 1_000_000_000
        func e(_ name: String, _ size: Int64, _ mtime: Int64) -> FrescoCacheIndex.Entry {
            .init(shard: "1", name: name, size: size, mtime: mtime)
        }
        let entries = [e("a", 30, now - 5 * hour), e("b", 30, now - 9 * hour), e("c", 30, now + 3 * hour),
                       e("d", 30, now + 1 * hour), e("e", 30, now)]
        // 150 bytes, limit 100: target 90, excess 60: remove until > 60 removed.
        let plan = FrescoCacheIndex.evictionPlan(entries, limit: 100, now: now, pinned: { _ in false })
        #expect(plan.map(\.name) == ["c", "b", "a"])
        #expect(FrescoCacheIndex.evictionPlan(entries, limit: 150, now: now, pinned: { _ in false }).isEmpty)
        #expect(FrescoCacheIndex.evictionPlan(entries, limit: 100, now: now, pinned: { $0 == "b" }).map(\.name) == ["c", "a", "e"])
    }

    /// EntryImpl.getTimestamp is `File.lastModified()`: milliseconds. Files
    /// of the same millisecond tie and keep their listing order (the stable
    /// `Collections.sort` over `FileTree.walkFileTree`), whatever their
    /// nanoseconds. Checked once against Fresco 3.6.0's own
    /// `DiskStorageCache` on a folder warmed by imgwarm (the nanosecond
    /// order disagreed with it at 4 of 19 limits).
    @Test func evictionComparesMillisecondsInListingOrder() {
        let now: Int64 = 1_000_000 * 1_000_000_000
        let ms: Int64 = 1_000_000
        func e(_ name: String, _ mtime: Int64) -> FrescoCacheIndex.Entry { .init(shard: "1", name: name, size: 30, mtime: mtime) }
        // Listed x, y, z: y and z share a millisecond, z's nanoseconds first.
        let entries = [e("x", now - 10 * ms), e("y", now - 20 * ms + 900), e("z", now - 20 * ms + 100)]
        // 90 bytes, limit 60: target 54, excess 36: two go.
        #expect(FrescoCacheIndex.evictionPlan(entries, limit: 60, now: now, pinned: { _ in false }).map(\.name) == ["y", "z"])
        // One millisecond older wins over listing order.
        let older = [e("y", now - 20 * ms), e("z", now - 21 * ms), e("x", now - 10 * ms)]
        #expect(FrescoCacheIndex.evictionPlan(older, limit: 60, now: now, pinned: { _ in false }).map(\.name) == ["z", "y"])
    }
}
