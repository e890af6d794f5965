import Testing
@testable import ImgWarmKit

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
}
