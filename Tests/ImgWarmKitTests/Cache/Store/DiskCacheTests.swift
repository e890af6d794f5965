import CFileScan
import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

func makeTempDirectory(_ name: String = "imgwarm-test") -> String {
    let path = NSTemporaryDirectory() + "\(name)-\(UUID().uuidString)"
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A `FileWriter` whose work a test changes between stores: the cache
/// takes its writer once, when it is made.
final class WatchedWriter: @unchecked Sendable {  // one test thread
    var beforeWrite: () -> Void = {}
    var writer: FileWriter {
        FileWriter { [self] fd, bytes in
            beforeWrite()
            return FileIO.writeAll(fd, bytes)
        }
    }
}

@Suite struct DiskCacheTests {
    @Test func storeWritesUnderTheSDWebImageNameAndLookupFindsIt() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = DiskCache(directory: dir + "/nested/cache")
        try cache.prepare()
        let key = "https://example.com/images/photo.jpg"
        let path = try cache.store([1, 2, 3], for: cache.fileName(forKey: key))
        #expect(path == dir + "/nested/cache/b46ca04023feeac3addabe8e574e2211.jpg")
        #expect(cache.existingPath(forKey: key) == path)
        #expect(FileManager.default.contents(atPath: path) == Data([1, 2, 3]))
        // Nothing is left in the temp folder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache.tempDirectory).isEmpty)
    }

    /// Stores go through descriptors of the cache and temp folders. After
    /// `cache clear --all` removed the state folder (the temp folder with
    /// it) between two stores, the next store makes the folders again and
    /// lands under its name, as by path; a file at the name is replaced.
    @Test func storeAfterTheTempFolderWasRemovedMakesItAgain() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = DiskCache(directory: dir)
        try cache.prepare()
        try cache.store([1], for: cache.fileName(forKey: "https://e/a.png"))
        try FileManager.default.removeItem(atPath: cache.stateDirectory)
        let path = try cache.store([2, 3], for: cache.fileName(forKey: "https://e/b.png"))
        #expect(path == dir + "/" + cache.fileName(forKey: "https://e/b.png").storedName)
        #expect(FileManager.default.contents(atPath: path) == Data([2, 3]))
        let replaced = try cache.store([9], for: cache.fileName(forKey: "https://e/b.png"), likelyNew: true)
        #expect(FileManager.default.contents(atPath: replaced) == Data([9]))
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache.tempDirectory).isEmpty)
    }

    /// A new entry on a cache that was empty at the start (`likelyNew`)
    /// is written as an unnamed file (O_TMPFILE) and linked in: while its
    /// bytes are being written no name exists for it anywhere. A file
    /// already at the name (another run's, or a neighbour's planted while
    /// this one downloaded) is replaced through a temp file and rename(2),
    /// so the name holds what this run wrote, as a replacement
    /// always does.
    @Test func newEntriesAreWrittenUnnamedThenLinked() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let watched = WatchedWriter()
        let cache = DiskCache(directory: dir, writer: watched.writer)
        try cache.prepare()
        let fm = FileManager.default
        func names() throws -> [String] {
            try fm.contentsOfDirectory(atPath: dir).filter { !$0.hasPrefix(".") }
                + fm.contentsOfDirectory(atPath: cache.tempDirectory)
        }
        // A filesystem without O_TMPFILE (some network and overlay ones)
        // takes the temp file path for new entries too.
        let probe = imgwarm_open_unnamed(AT_FDCWD, dir)
        let unnamed = probe >= 0
        if unnamed { close(probe) } else { print("DiskCacheTests: no O_TMPFILE in \(dir); new entries use a temp file there") }
        let name = cache.fileName(forKey: "https://example.com/a.png")
        var seenWhileWriting: [String]? = nil
        watched.beforeWrite = { seenWhileWriting = try? names() }
        let path = try cache.store([1, 2, 3], for: name, replacing: nil, likelyNew: true)
        watched.beforeWrite = {}
        #expect(seenWhileWriting?.count == (unnamed ? 0 : 1))
        #expect(fm.contents(atPath: path) == Data([1, 2, 3]))
        // A file under the name is replaced by this run's bytes.
        _ = try cache.store([7, 7], for: name, replacing: nil, likelyNew: true)
        #expect(fm.contents(atPath: path) == Data([7, 7]))
        #expect(try names() == [(path as NSString).lastPathComponent])
        // Replacing: a temp file under .imgwarm/tmp while writing, then rename.
        var tempWhileWriting: [String] = []
        watched.beforeWrite = { tempWhileWriting = (try? fm.contentsOfDirectory(atPath: cache.tempDirectory)) ?? [] }
        _ = try cache.store([4, 5], for: name, replacing: path, likelyNew: false)
        #expect(tempWhileWriting.count == 1)
        #expect(fm.contents(atPath: path) == Data([4, 5]))
        #expect(try fm.contentsOfDirectory(atPath: cache.tempDirectory).isEmpty)
    }

    /// What may count as an entry: regular files only, and in
    /// a folder others may write only the running user's.
    @Test(arguments: [
        (S_IFREG, uid_t(1000), false, true),
        (S_IFREG, 1000, true, true),    // ours, in a shared folder
        (S_IFREG, 65534, false, true),  // another user's, in a folder only we write (root put it there)
        (S_IFREG, 65534, true, false),  // another user's, in a shared folder: anyone's
        (S_IFREG, 0, true, false),      // root's, when root is not the one running
        (S_IFLNK, 1000, false, false),
        (S_IFIFO, 1000, false, false),
        (S_IFDIR, 1000, false, false),
        (S_IFSOCK, 1000, false, false),
    ] as [(mode_t, uid_t, Bool, Bool)])
    func whatCountsAsAnEntry(_ type: mode_t, _ owner: uid_t, _ othersMayWrite: Bool, _ counts: Bool) {
        #expect(FolderBackend.countsAsEntry(type: type, owner: owner, runningUser: 1000, othersMayWrite: othersMayWrite) == counts)
    }

    /// Temp names: `PID-TAG-TOKEN.tmp`, TOKEN 16 hex digits that differ
    /// from one file to the next and follow no counter.
    @Test func tempNamesAreUnpredictable() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let watched = WatchedWriter()
        let cache = DiskCache(directory: dir, writer: watched.writer)
        try cache.prepare()
        var seen: [String] = []
        for i in 0..<3 {
            // A replacement goes through a temp file: watch its name.
            watched.beforeWrite = {}
            try cache.store([UInt8(i)], for: cache.fileName(forKey: "k"))
            watched.beforeWrite = { seen += (try? FileManager.default.contentsOfDirectory(atPath: cache.tempDirectory)) ?? [] }
            _ = try cache.store([1, 2], for: cache.fileName(forKey: "k"), replacing: nil, likelyNew: false)
        }
        #expect(seen.count == 3)
        for name in seen {
            let parts = name.dropLast(4).split(separator: "-")
            #expect(name.hasSuffix(".tmp") && parts.count == 3)
            #expect(parts[0] == Substring(String(getpid())) && parts[1] == Substring(TempFiles.processTag))
            #expect(parts[2].count == 16 && parts[2].allSatisfy(\.isHexDigit))
        }
        #expect(Set(seen).count == 3)
        // Consecutive counters give unrelated tokens (no shared prefix run).
        let tokens = seen.map { $0.split(separator: "-")[2].prefix(16) }
        #expect(tokens[0].prefix(8) != tokens[1].prefix(8) || tokens[1].prefix(8) != tokens[2].prefix(8))
    }

    @Test func lookupFallsBackToTheBareMD5() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = DiskCache(directory: dir)
        let key = "https://example.com/images/photo.jpg"
        FileManager.default.createFile(atPath: dir + "/b46ca04023feeac3addabe8e574e2211", contents: Data([9]))
        #expect(cache.existingPath(forKey: key) == dir + "/b46ca04023feeac3addabe8e574e2211")
        #expect(cache.existingPath(forKey: "https://example.com/other.jpg") == nil)
    }

    @Test func readersNeverSeeAPartialFile() throws {
        // A reader polling the final name while large files are replaced
        // sees either nothing, the old bytes or the new bytes: never a mix.
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = DiskCache(directory: dir)
        try cache.prepare()
        let name = cache.fileName(forKey: "https://example.com/big.png")
        let a = [UInt8](repeating: 0xAA, count: 4 << 20)
        let b = [UInt8](repeating: 0xBB, count: 4 << 20)
        let final = dir + "/" + name.storedName
        let done = ManagedAtomicFlag()
        let reader = Thread {
            while !done.value {
                if let data = FileManager.default.contents(atPath: final) {
                    let ok = data.count == a.count && (data.allSatisfy { $0 == 0xAA } || data.allSatisfy { $0 == 0xBB })
                    if !ok { done.failures += 1 }
                    done.reads += 1
                }
            }
        }
        reader.start()
        for i in 0..<20 { try cache.store(i % 2 == 0 ? a : b, for: name) }
        done.value = true
        while !reader.isFinished { usleep(1000) }
        #expect(done.failures == 0)
        #expect(done.reads > 0)
    }

    @Test func staleTempFilesOfDeadRunsAreCleanedAndLiveOnesKept() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = DiskCache(directory: dir)
        try cache.prepare()
        // pid 2^22+1 is above the kernel's pid_max default: never alive.
        let dead = cache.tempDirectory + "/4194305-1.tmp"
        let live = cache.tempDirectory + "/1-7.tmp"  // init is always alive
        let mine = cache.tempDirectory + "/\(getpid())-99.tmp"
        for p in [dead, live, mine] { FileManager.default.createFile(atPath: p, contents: Data([1])) }
        #expect(cache.staleTempFiles() == [dead])
        #expect(cache.cleanStaleTempFiles() == 1)
        #expect(!FileManager.default.fileExists(atPath: dead))
        #expect(FileManager.default.fileExists(atPath: live))
        #expect(FileManager.default.fileExists(atPath: mine))
    }

    @Test func defaultDirectoryFollowsEnvironment() {
        #expect(CacheLocation.defaultDirectory(environment: ["HOME": "/home/u"]) == "/home/u/.cache/com.hackemist.SDImageCache/default")
        #expect(CacheLocation.defaultDirectory(environment: ["HOME": "/home/u", "XDG_CACHE_HOME": "/x"]) == "/x/com.hackemist.SDImageCache/default")
        #expect(CacheLocation.defaultDirectory(environment: ["HOME": "/home/u", "IMGWARM_CACHE": "/c"]) == "/c")
    }

    @Test func statsCountEntriesAndSkipHiddenFiles() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = DiskCache(directory: dir)
        try cache.prepare()
        try cache.store([0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 0, count: 96), for: cache.fileName(forKey: "https://e.com/a.jpg"))
        try cache.store([0x89] + Array("PNG\r\n\u{1A}\n".utf8) + [0, 0], for: cache.fileName(forKey: "https://e.com/b.png"))
        try cache.store(Array("<html></html>".utf8), for: cache.fileName(forKey: "https://e.com/c"))
        FileManager.default.createFile(atPath: dir + "/.DS_Store", contents: Data(count: 5000))
        FileManager.default.createFile(atPath: cache.stateDirectory + "/junk", contents: Data(count: 5000))
        let stats = try CacheStatistics.collect(cache)
        #expect(stats.files == 3)
        #expect(stats.bytes == 100 + 10 + 13)
        #expect(stats.formats == ["jpeg": 1, "png": 1, "unknown": 1])
    }

    @Test func clearRemovesEntriesAndKeepsStateUnlessAll() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = DiskCache(directory: dir)
        try cache.prepare()
        try cache.store([1, 2], for: cache.fileName(forKey: "https://e.com/a.jpg"))
        FileManager.default.createFile(atPath: dir + "/.keep", contents: Data([1]))
        let r = try CacheMaintenance.clear(cache, includingState: false)
        #expect(r.files == 1)
        #expect(FileManager.default.fileExists(atPath: cache.stateDirectory))
        #expect(FileManager.default.fileExists(atPath: dir + "/.keep"))
        _ = try CacheMaintenance.clear(cache, includingState: true)
        #expect(!FileManager.default.fileExists(atPath: cache.stateDirectory))
    }
}

/// Shared between a test and its reader thread.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var _value = false
    var value: Bool {
        get { lock.lock(); defer { lock.unlock() }; return _value }
        set { lock.lock(); _value = newValue; lock.unlock() }
    }
    var failures = 0
    var reads = 0
}
