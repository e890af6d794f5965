import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

struct BodySpillTests {
    /// An eighth of the bodies' budget, within 256 KiB and 1 MiB.
    @Test func thresholdFollowsTheBudgetWithinItsBounds() {
        let kib = 1 << 10, mib = 1 << 20, gib = 1 << 30
        let table: [(budget: Int, threshold: Int)] = [
            (1, 256 * kib),             // --memory far below a thumbnail: still no thumbnail spills
            (32 * kib, 256 * kib),
            (2 * mib, 256 * kib),
            (4 * mib, 512 * kib),
            (8 * mib, 1 * mib),
            (96 * mib, 1 * mib),
            (gib, 1 * mib),              // the default on a machine without a cgroup limit
        ]
        for row in table {
            #expect(SpillRule.threshold(bodiesBudget: row.budget) == row.threshold, "budget \(row.budget)")
        }
    }

    /// Known large (Content-Length) spills at once; otherwise when the
    /// body would grow past the threshold.
    @Test func aBodySpillsPastTheThreshold() {
        let t = 256 << 10
        let table: [(held: Int, incoming: Int, expected: Int?, spills: Bool)] = [
            (0, 0, 40_000, false),       // a thumbnail with its length
            (0, 0, t, false),
            (0, 0, t + 1, true),         // announced larger: no byte held in memory
            (0, 16_384, nil, false),     // chunked, growing
            (t - 16_384, 16_384, nil, false),
            (t - 16_383, 16_384, nil, true),
            (t, 1, nil, true),
        ]
        for row in table {
            #expect(SpillRule.spills(held: row.held, incoming: row.incoming, expected: row.expected, threshold: t) == row.spills,
                    "\(row)")
        }
    }

    /// statfs(2) f_type: TMPFS_MAGIC and RAMFS_MAGIC are memory
    /// (linux/magic.h); a disk's bytes are released once written.
    @Test func spilledBytesStayChargedOnAMemoryFilesystemOnly() {
        let table: [(type: Int, name: String, charged: Bool)] = [
            (0x0102_1994, "tmpfs", true),
            (0x8584_58f6, "ramfs", true),
            (0xEF53, "ext4", false),
            (0x5846_5342, "xfs", false),
            (0x9123_683E, "btrfs", false),
            (0x794C_7630, "overlayfs", false),
            (0, "unknown", false),
        ]
        for row in table {
            #expect(SpillRule.chargesSpilledBytes(filesystemType: row.type) == row.charged, "\(row.name)")
        }
    }

    /// The engine with a spill folder: a body announced or grown past the
    /// threshold arrives in its file, byte for byte as the one kept in
    /// memory; a small one stays in memory; one past `--max-bytes` fails
    /// and leaves nothing; and the folder never holds a name.
    @Test func bodiesPastTheThresholdArriveInTheirFile() throws {
        let dir = makeTempDirectory("imgwarm-spill")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = try FolderHandle.open(dir, in: AT_FDCWD, path: dir, listing: true)
        let spill = try #require(BodySpill(folder: folder.fd, path: dir, threshold: 256 << 10))
        #expect(spill.mode == "disk" || spill.mode == "memory-filesystem")
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let plain = try Downloader(configuration: testConfiguration())
        defer { plain.shutdown() }
        let spilling = try Downloader(configuration: testConfiguration {
            $0.bodySpill = spill
            $0.maxBodyBytes = 4_000_000
        })
        defer { spilling.shutdown() }
        for path in ["/huge-length/3000000", "/huge/3000000"] {
            let inMemory = try #require(try fetch(plain, server.url(path)).response, "\(path)")
            let response = try #require(try fetch(spilling, server.url(path)).response, "\(path)")
            #expect(inMemory.spilled == nil && inMemory.body.count == 3_000_000, "\(path)")
            #expect(response.spilled != nil && response.body.isEmpty && response.bodyCount == 3_000_000, "\(path)")
            #expect(response.bodyBytes.withUnsafeBytes { [UInt8]($0) } == inMemory.body, "\(path)")
        }
        let small = try #require(try fetch(spilling, server.url("/huge/200000")).response)
        #expect(small.spilled == nil && small.body.count == 200_000)
        for path in ["/huge-length/5000000", "/huge/5000000"] {
            #expect(try fetch(spilling, server.url(path)).failure?.errorClass == .tooLarge, "\(path)")
        }
        // The two received whole; not the one cut off at --max-bytes.
        #expect(spill.figures.bodies == 2 && spill.figures.bytes == 6_000_000, "\(spill.figures)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    /// A folder whose filesystem has no O_TMPFILE (procfs answers
    /// EOPNOTSUPP): the body stays in memory, whole, and spilling is off
    /// for the rest of the run.
    @Test func withoutOTmpfileABodyStaysInMemory() throws {
        let folder = try FolderHandle.open("/proc", in: AT_FDCWD, path: "/proc", listing: false)
        let spill = try #require(BodySpill(folder: folder.fd, path: "/proc", threshold: 256 << 10))
        try withServer(testConfiguration { $0.bodySpill = spill }) { server, downloader in
            let response = try #require(try fetch(downloader, server.url("/huge/3000000")).response)
            #expect(response.spilled == nil && response.body.count == 3_000_000)
        }
        #expect(spill.mode == "unsupported" && spill.figures.bodies == 0)
    }
}
