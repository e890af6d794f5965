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

/// Runs on other machines or in other containers share a cache on a volume
/// (docs/recipes/kubernetes-shared-volume.md). Their pids mean
/// nothing here, so a pid-only rule deleted their live temp files, and equal
/// pids (imgwarm as pid 1 in every pod) made temp names collide.
@Suite struct TempFileOwnershipTests {
    @Test func tempFilesOfOtherHostsAreJudgedByAgeNotByPid() throws {
        let dir = makeTempDirectory("imgwarm-tmp-owner")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = DiskCache(directory: dir)
        try cache.prepare()
        let ourHost = String(TempFiles.processTag.prefix(8))
        let otherHost = ourHost == "00000000" ? "11111111" : "00000000"
        let t = cache.tempDirectory
        // pid 4194305 is above the kernel's pid_max: never alive here.
        let foreignFresh = t + "/4194305-\(otherHost)12345678-1.tmp"   // another pod, writing now
        let foreignOld = t + "/4194305-\(otherHost)12345678-2.tmp"     // another pod, died an hour ago
        let localDead = t + "/4194305-\(ourHost)12345678-3.tmp"        // this host, dead pid
        let localLive = t + "/1-\(ourHost)12345678-4.tmp"              // this host, pid 1 (alive)
        let legacyDead = t + "/4194305-5.tmp"                          // name from before tags
        for p in [foreignFresh, foreignOld, localDead, localLive, legacyDead] {
            FileManager.default.createFile(atPath: p, contents: Data([1]))
        }
        var old = [timespec(tv_sec: time(nil) - 3600, tv_nsec: 0), timespec(tv_sec: time(nil) - 3600, tv_nsec: 0)]
        utimensat(AT_FDCWD, foreignOld, &old, 0)

        #expect(Set(cache.staleTempFiles()) == [foreignOld, localDead, legacyDead])
        #expect(cache.cleanStaleTempFiles() == 3)
        #expect(FileManager.default.fileExists(atPath: foreignFresh))
        #expect(FileManager.default.fileExists(atPath: localLive))
    }

    @Test func tempNamesCarryATagSoEqualPidsDoNotCollide() throws {
        let dir = makeTempDirectory("imgwarm-tmp-name")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = DiskCache(directory: dir)
        try cache.prepare()
        // Another container's run with our pid wrote temp files with the
        // counter values we are about to use: our writes must not fail.
        for n in 1...5 {
            FileManager.default.createFile(atPath: cache.tempDirectory + "/\(getpid())-\(n).tmp", contents: Data([0]))
            FileManager.default.createFile(atPath: cache.tempDirectory + "/\(getpid())-ffffffff00000000-\(n).tmp", contents: Data([0]))
        }
        for i in 0..<5 {
            let bytes = TinyPNG.make(seed: i)
            let path = try cache.store(bytes, for: cache.fileName(forKey: "k\(i)"))
            #expect(FileManager.default.contents(atPath: path).map([UInt8].init) == bytes)
        }
        #expect(TempFiles.processTag.count == 16)
    }
}
