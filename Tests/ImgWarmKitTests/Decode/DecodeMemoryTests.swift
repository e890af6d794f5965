import CImageFixtures
import Foundation
import Testing
@testable import ImgWarmKit

private func estimate(_ bytes: [UInt8], _ format: ImageFormat, maxPixels: UInt64 = 100_000_000) -> UInt64 {
    bytes.withUnsafeBytes { DecodeMemory.estimate(format, $0, maxPixels: maxPixels) }
}

private func frame(_ bytes: [UInt8]) -> DecodeMemory.JPEGFrame? {
    bytes.withUnsafeBytes { DecodeMemory.jpegFrame($0) }
}

@Suite struct DecodeMemoryEstimateTests {
    // libjpeg-turbo jdinput.c initial_setup: width_in_blocks =
    // ceil(image_width * h_samp / (max_h_samp * 8)); jdcoefct.c
    // jinit_d_coef_controller: one virtual array per component of
    // jround_up(width_in_blocks, h_samp) x jround_up(height_in_blocks,
    // v_samp) blocks of 64 JCOEF (2 bytes).
    @Test func progressiveJPEGCoefficientsFollowLibjpeg() throws {
        // libjpeg's defaults: 2x2 luma, 1x1 chroma (4:2:0).
        let f = try #require(frame(Fixture.jpeg(1000, 1000, IWF_JPEG_PROGRESSIVE)))
        #expect(f.progressive && f.multipleScans)
        #expect(f.sampling.map { [$0.0, $0.1] } == [[2, 2], [1, 1], [1, 1]])
        // Luma 125 blocks rounded up to 126; chroma ceil(1000/16) = 63.
        #expect(f.coefficientBytes == 126 * 126 * 128 + 2 * 63 * 63 * 128)

        let smooth = Fixture.take { iwf_jpeg_smooth(4000, 4000, 1, $0) }
        let big = try #require(frame(smooth))
        #expect(big.coefficientBytes == 3 * 500 * 500 * 128)
        #expect(estimate(smooth, .jpeg) == DecodeMemory.base + 96_000_000 + 4000 * 3 * 8)
    }

    @Test func baselineJPEGNeedsRowsOnly() throws {
        let jpeg = Fixture.jpeg(1000, 1000)
        let f = try #require(frame(jpeg))
        #expect(!f.progressive && !f.multipleScans && f.firstScanComponents == 3)
        #expect(estimate(jpeg, .jpeg) == DecodeMemory.base + 1000 * 3 * 2 * 8)
        // The gray kind: one component in one scan.
        #expect(frame(Fixture.jpeg(64, 64, IWF_JPEG_GRAY))?.multipleScans == false)
    }

    @Test func aSequentialJPEGWithAScanPerComponentIsBufferedWhole() throws {
        var f = try #require(frame(Fixture.jpeg(64, 64)))
        f.firstScanComponents = 1
        #expect(f.multipleScans)
    }

    @Test func anImageOverThePixelLimitCostsTheBaseOnly() {
        // Its validator refuses it from the header, before any allocation.
        let jpeg = Fixture.take { iwf_jpeg_smooth(2000, 2000, 1, $0) }
        #expect(estimate(jpeg, .jpeg, maxPixels: 1_000_000) == DecodeMemory.base)
        #expect(estimate(jpeg, .jpeg) > 24_000_000)
    }

    @Test func pngInflatesTheFilteredDataWholeUpTo32MiB() {
        // png_validate.c, iw_fast_inflate (IW_PNG_FAST_MAX_BYTES).
        let png = Fixture.png(100, 50, .rgba)
        let filtered = UInt64((100 * 4 + 1) * 50), data = UInt64(png.count)
        #expect(estimate(png, .png) == DecodeMemory.base + data + max(data, filtered))
        // 4000 x 3000 RGBA: 48 MB of filtered rows, inflated row by row.
        let large = Fixture.withIHDRSize(png, width: 4000, height: 3000)
        #expect(estimate(large, .png) == DecodeMemory.base + 2 * 16001 + 65536)
        // Interlaced: up to 15 more bytes a row for the passes.
        let interlaced = Fixture.png(100, 50, .rgba, interlaced: true)
        #expect(estimate(interlaced, .png)
            == DecodeMemory.base + UInt64(interlaced.count) + max(UInt64(interlaced.count), filtered + 15 * 50))
    }

    @Test func webpByItsBitstreams() {
        let pixels: UInt64 = 300 * 200, rows = 300 * 128 + pixels / 8
        #expect(estimate(Fixture.webp(300, 200), .webp) == DecodeMemory.base + rows)
        #expect(estimate(Fixture.webp(300, 200, lossless: true), .webp) == DecodeMemory.base + rows + 5 * pixels)
        #expect(estimate(Fixture.webp(300, 200, alpha: true), .webp) == DecodeMemory.base + rows + 6 * pixels)
        // The chunks inside each ANMF frame are what counts.
        #expect(estimate(Fixture.webpAnimated(300, 200, frames: 2), .webp) == DecodeMemory.base + rows)
        #expect(estimate(Fixture.webpAnimated(300, 200, frames: 2, lossless: true), .webp) > DecodeMemory.base + rows + 5 * pixels - 1)
    }

    @Test func planesOfAVIFAndHEIFWithAndWithoutAlpha() {
        let still = ModernFixture.avif(64, 48), alpha = ModernFixture.avif(64, 48, alpha: true)
        #expect(still.withUnsafeBytes { DecodeMemory.ContainerFacts($0).alpha } == false)
        #expect(alpha.withUnsafeBytes { DecodeMemory.ContainerFacts($0).alpha } == true)
        #expect(estimate(still, .avif) == DecodeMemory.base + (8 << 20) + 64 * 48 * 16)
        #expect(estimate(alpha, .avif) == DecodeMemory.base + (8 << 20) + 64 * 48 * 32)
        // The planes are those of the coded image (`ispe`), before any crop.
        let heic = ModernFixture.heic(64, 48)
        let coded = heic.withUnsafeBytes { ImageHeader.read(.heic, $0) }
        guard case .success(let info) = coded, let w = info.width, let h = info.height else {
            Issue.record("no ispe in the HEIC fixture")
            return
        }
        #expect(estimate(heic, .heic) == DecodeMemory.base + (2 << 20) + UInt64(w * h) * 6)
        #expect(estimate(ModernFixture.jxl(64, 48), .jxl) == DecodeMemory.base + (16 << 20) + 64 * 48 * 24)
    }

    @Test func formatsNotDecodedHereCostNothing() {
        #expect(estimate(Array("BM".utf8) + [UInt8](repeating: 0, count: 60), .bmp) == 0)
    }

    @Test func theReasonNamesTheImageTheEstimateAndTheBudget() {
        let jpeg = Fixture.jpeg(1000, 1000, IWF_JPEG_PROGRESSIVE)
        var options = ValidationOptions()
        options.decodeMemory = DecodeMemoryGate(limit: 1 << 20)
        guard case .failure(let failure) = ImageValidator.validate(jpeg, options: options) else {
            Issue.record("passed over the budget")
            return
        }
        #expect(failure.kind == .overDecodeMemory)
        #expect(failure.reason == "JPEG 1000x1000 needs an estimated 3.2 MiB to decode, more than the decode memory budget of 1.0 MiB (--decode-memory)")
        options.decodeMemory = DecodeMemoryGate(limit: 4 << 20)
        #expect(ImageValidator.validate(jpeg, options: options) == .success(ImageInfo(format: .jpeg, width: 1000, height: 1000, frames: 1)))
    }
}

@Suite struct DecodeMemoryGateTests {
    @Test func aShareOverTheWholeBudgetIsRefusedWithoutRunning() {
        let gate = DecodeMemoryGate(limit: 100)
        var ran = false
        #expect(gate.withShare(101) { ran = true } == nil)
        #expect(!ran)
        #expect(gate.withShare(100) { 7 } == 7)
    }

    @Test func sharesNeverAddUpToMoreThanTheBudget() {
        let gate = DecodeMemoryGate(limit: 100)
        // What the decoders hold at once, counted under one lock.
        final class Held: @unchecked Sendable {  // @unchecked Sendable: every field only under `lock`
            let lock = NSLock()
            var inside: UInt64 = 0, most: UInt64 = 0, done = 0
        }
        let held = Held()
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            let share: UInt64 = i % 2 == 0 ? 40 : 30
            _ = gate.withShare(share) {
                held.lock.lock(); held.inside += share; held.most = max(held.most, held.inside); held.lock.unlock()
                usleep(2_000)
                held.lock.lock(); held.inside -= share; held.done += 1; held.lock.unlock()
            }
        }
        #expect(held.done == 16)
        #expect(held.most <= 100)
        #expect(gate.peakHeld <= 100 && gate.peakHeld >= 40)
    }
}

@Suite struct DecodeMemoryDefaultTests {
    static let gib: UInt64 = 1 << 30, mib: UInt64 = 1 << 20
    /// (cgroup limit, RAM) -> a quarter of the lower, at most 1 GiB.
    static let table: [(limit: UInt64?, ram: UInt64, expected: UInt64)] = [
        (2 * gib, 16 * gib, 512 * mib),
        (nil, 16 * gib, gib),
        (nil, 2 * gib, 512 * mib),
        (64 * gib, 8 * gib, gib),
        (256 * mib, 8 * gib, 64 * mib),
    ]

    @Test func aQuarterOfTheLowerLimit() {
        for row in Self.table {
            #expect(DecodeMemoryDefault.bytes(limit: row.limit, ram: row.ram) == row.expected, "\(row)")
        }
    }

    static func files(_ table: [String: String]) -> (String) -> String? { { table[$0] } }

    @Test func cgroupV2TakesTheLowestLimitUpToTheRoot() {
        // A pod's limit on the parent, none on the container's own cgroup.
        let read = Self.files([
            "/sys/fs/cgroup/kubepods/pod1/c1/memory.max": "max\n",
            "/sys/fs/cgroup/kubepods/pod1/memory.max": "536870912\n",
            "/sys/fs/cgroup/kubepods/memory.max": "8589934592\n",
        ])
        #expect(CgroupMemory.limit(selfCgroup: "0::/kubepods/pod1/c1\n", read: read) == 536_870_912)
        #expect(CgroupMemory.limit(selfCgroup: "0::/\n", read: Self.files(["/sys/fs/cgroup/memory.max": "max"])) == nil)
        // A cgroup namespace: the container's own limit at the root.
        #expect(CgroupMemory.limit(selfCgroup: "0::/\n", read: Self.files(["/sys/fs/cgroup/memory.max": "1073741824"])) == 1 << 30)
    }

    @Test func cgroupV1ReadsTheMemoryControllerAndIgnoresUnlimited() {
        let v1 = "12:cpu,cpuacct:/docker/abc\n9:memory:/docker/abc\n1:name=systemd:/docker/abc\n"
        #expect(CgroupMemory.limit(selfCgroup: v1, read: Self.files([
            "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "268435456\n",
        ])) == 256 << 20)
        // Without a cgroup namespace the container sees its own at the root.
        #expect(CgroupMemory.limit(selfCgroup: v1, read: Self.files([
            "/sys/fs/cgroup/memory/memory.limit_in_bytes": "268435456\n",
        ])) == 256 << 20)
        #expect(CgroupMemory.limit(selfCgroup: v1, read: Self.files([
            "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
        ])) == nil)
    }
}
