import CImageCodecs
import CImageFixtures
import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

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

/// A `grid` primary item (ISO/IEC 23008-12 6.6.2.3 ImageGrid: version,
/// flags (bit 0: 32-bit sizes), rows_minus_one, columns_minus_one,
/// output_width, output_height, in the item's data through `iloc`) is
/// sized from its output and its tiles, not from an `ispe` that may lie.
@Suite struct DecodeMemoryGridTests {
    static func coded(_ bytes: [UInt8]) -> (width: UInt32, height: UInt32, tiles: UInt32) {
        var w: UInt32 = 0, h: UInt32 = 0
        let tiles = bytes.withUnsafeBufferPointer { p in
            iw_bmff_largest_coded_size(p.baseAddress, p.count, &w, &h)
            return iw_bmff_grid_tiles(p.baseAddress, p.count)
        }
        return (w, h, tiles)
    }

    /// The grid item's own `ispe` rewritten to 16x16 (the tiles' left as
    /// they are): the claim an estimate from the largest `ispe` believed.
    static func lyingGrid() -> (honest: [UInt8], lying: [UInt8]) {
        let grid = ModernFixture.avifGrid(tile: 256, 192, columns: 3, rows: 2)
        var lying = grid
        for at in ModernFixture.ispeOffsets(grid) where ModernFixture.be32(grid, at + 12) == 768 && ModernFixture.be32(grid, at + 16) == 384 {
            Fixture.put32(&lying, at + 12, 16)
            Fixture.put32(&lying, at + 16, 16)
        }
        return (grid, lying)
    }

    /// libavif's grid (3 x 2 tiles of 256x192): 768x384 and 6 tiles, the
    /// same when the grid item's `ispe` says 16x16, or when every `ispe`
    /// does (the tiles' too).
    @Test func aGridIsSizedFromItsOutputWhateverTheIspeSays() throws {
        let (grid, lying) = Self.lyingGrid()
        #expect(lying != grid)
        let allLying = ModernFixture.withISPE(grid, width: 16, height: 16)
        #expect(Self.coded(grid) == (768, 384, 6))
        #expect(Self.coded(lying) == (768, 384, 6))
        #expect(Self.coded(allLying) == (768, 384, 6))
        let planes = DecodeMemory.base + (8 << 20) + 768 * 384 * 16
        #expect(estimate(grid, .avif) == planes + 6 * UInt64(IW_AVIF_TILE_MEMORY))
        #expect(estimate(lying, .avif) == estimate(grid, .avif))
        #expect(estimate(allLying, .avif) == estimate(grid, .avif))
        // HEIF charges the canvas, not the tiles' decoders (libheif decodes
        // one tile at a time into it).
        #expect(estimate(lying, .heif) == DecodeMemory.base + (2 << 20) + 768 * 384 * 6)
    }

    /// The real decoders, given the estimate as their share: libavif
    /// decodes the grid at its output size (and fails the lying one when
    /// its canvas comes out larger than the `ispe`); libheif decodes the
    /// lying one whole, into the canvas of the grid's output size.
    @Test func theDecodersDecodeAGridAtTheSizeTheEstimateCharges() throws {
        let (grid, lying) = Self.lyingGrid()
        for format in [ImageFormat.avif, .heif] {
            let info = try grid.withUnsafeBytes {
                try CodecBridge.decode(format, $0, maxPixels: 100_000_000, memoryShare: estimate(grid, format)).get()
            }
            #expect(info.width == 768 && info.height == 384, "\(format): \(info)")
        }
        let avif = lying.withUnsafeBytes { CodecBridge.decode(.avif, $0, maxPixels: 100_000_000, memoryShare: estimate(lying, .avif)) }
        guard case .failure(let failure) = avif else {
            Issue.record("libavif passed a grid whose ispe lies: \(avif)")
            return
        }
        #expect(failure.description.contains("frame 1 is 768x384, the container says 16x16"), "\(failure)")
        let heif = lying.withUnsafeBytes { CodecBridge.decode(.heif, $0, maxPixels: 100_000_000, memoryShare: estimate(lying, .heif)) }
        #expect((try? heif.get()) != nil, "\(heif)")
    }

    static func be16(_ v: UInt32) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    /// A `meta` by hand: item 1 a grid whose data (`grid`) is in `idat`
    /// (iloc version 1, construction_method 1, 4-byte offset and length),
    /// items 2... `hvc1` tiles referenced by `dimg`, each with property 1,
    /// an `ispe` of `tile`; the grid item with property 2, an `ispe` of
    /// 16x16. ISO/IEC 14496-12 8.11 (pitm, iinf/infe v2, iloc, iref) and
    /// ISO/IEC 23008-12 9.3 (ipco, ipma).
    static func handMade(grid: [UInt8], tiles: Int, tile: (UInt32, UInt32), gridOffset: UInt32 = 0,
                         gridLength: UInt32? = nil) -> [UInt8] {
        let ids = (0..<tiles).map { UInt32($0 + 2) }
        let infe = box("infe", [2, 0, 0, 0] + be16(1) + be16(0) + Array("grid".utf8) + [0])
            + ids.flatMap { box("infe", [2, 0, 0, 0] + be16($0) + be16(0) + Array("hvc1".utf8) + [0]) }
        let iinf = box("iinf", [0, 0, 0, 0] + be16(UInt32(tiles + 1)) + infe)
        let iloc = box("iloc", [1, 0, 0, 0, 0x44, 0x00] + be16(1) + be16(1) + be16(1) + be16(0) + be16(1)
            + be32(gridOffset) + be32(gridLength ?? UInt32(grid.count)))
        let iref = box("iref", [0, 0, 0, 0] + box("dimg", be16(1) + be16(UInt32(tiles)) + ids.flatMap { be16($0) }))
        let ipco = box("ipco", box("ispe", [0, 0, 0, 0] + be32(tile.0) + be32(tile.1))
            + box("ispe", [0, 0, 0, 0] + be32(16) + be32(16)))
        let ipma = box("ipma", [0, 0, 0, 0] + be32(UInt32(tiles + 1)) + be16(1) + [1, 0x82]
            + ids.flatMap { be16($0) + [1, 0x81] })
        let meta = box("meta", [0, 0, 0, 0] + box("hdlr", [UInt8](repeating: 0, count: 24)) + box("pitm", [0, 0, 0, 0] + be16(1))
            + iinf + iloc + iref + box("iprp", ipco + ipma) + box("idat", grid))
        return box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)) + meta
    }

    struct GridCase: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var width: UInt32, height: UInt32, tiles: UInt32
        var testDescription: String { name }
    }

    static let cases: [GridCase] = [
        // 16-bit sizes: 2 x 2 tiles of 512x512, output 1000x1000.
        GridCase(name: "16-bit output within its tiles",
                 bytes: handMade(grid: [0, 0, 1, 1] + be16(1000) + be16(1000), tiles: 4, tile: (512, 512)),
                 width: 1024, height: 1024, tiles: 4),
        // flags bit 0: 32-bit sizes; an output larger than the tiles.
        GridCase(name: "32-bit output over its tiles",
                 bytes: handMade(grid: [0, 1, 0, 1] + be32(70000) + be32(3), tiles: 2, tile: (64, 64)),
                 width: 70000, height: 3, tiles: 2),
        // The tiles claimed larger than the output: rows x columns of them.
        GridCase(name: "tiles over the output",
                 bytes: handMade(grid: [0, 0, 2, 0] + be16(16) + be16(16), tiles: 3, tile: (300, 200)),
                 width: 300, height: 600, tiles: 3),
        // The grid data is not where iloc says: no grid claim, the ispes only.
        GridCase(name: "extent past idat",
                 bytes: handMade(grid: [0, 0, 1, 1] + be16(4000) + be16(4000), tiles: 4, tile: (512, 512), gridOffset: 4),
                 width: 512, height: 512, tiles: 0),
        GridCase(name: "extent length past idat",
                 bytes: handMade(grid: [0, 0, 1, 1] + be16(4000) + be16(4000), tiles: 4, tile: (512, 512), gridLength: 0xFFFF_FFF0),
                 width: 512, height: 512, tiles: 0),
        // 32-bit flag without the 32-bit fields: the output is not read,
        // the tiles still are.
        GridCase(name: "32-bit flag, 8 bytes",
                 bytes: handMade(grid: [0, 1, 0, 1] + be16(4000) + be16(4000), tiles: 2, tile: (100, 100)),
                 width: 200, height: 100, tiles: 2),
        // Data cut short anywhere in meta: never a read past it.
        GridCase(name: "cut inside iloc",
                 bytes: Array(handMade(grid: [0, 0, 1, 1] + be16(1000) + be16(1000), tiles: 4, tile: (512, 512)).prefix(150)),
                 width: 0, height: 0, tiles: 0),
    ]

    /// `meta` holding `levels` `iprp` boxes, each the whole of the one
    /// before (8 bytes a level), around the grid's `ipco` and `ipma`.
    static func nestedIprp(levels: Int, around inner: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(levels * 8 + inner.count)
        for level in 0..<levels { out += Self.be32(UInt32((levels - level) * 8 + inner.count)) + Array("iprp".utf8) }
        return out + inner
    }

    /// A million `iprp` boxes one inside the other (8 MB): the walk reads
    /// `iprp` one level under `meta` only, where ISO/IEC 23008-12 9.3
    /// puts it, so it neither follows them down (which overflowed the
    /// decoding thread's stack at 100,000 levels, an 800 KB file) nor
    /// finds a grid's properties deeper than that.
    @Test func nestedIprpBoxesAreNotFollowed() {
        let honest = Self.handMade(grid: [0, 0, 1, 1] + Self.be16(1000) + Self.be16(1000), tiles: 4, tile: (512, 512))
        #expect(Self.coded(honest) == (1024, 1024, 4))
        let ftyp = box("ftyp", Array("avif".utf8) + [0, 0, 0, 0] + Array("mif1avif".utf8))
        let deep = Self.nestedIprp(levels: 1_000_000, around: [])
        let file = ftyp + box("meta", [0, 0, 0, 0] + deep)
        #expect(Self.coded(file) == (0, 0, 0))
        #expect(estimate(file, .avif) == estimate(ftyp + box("meta", [0, 0, 0, 0]), .avif))
        // The grid's own boxes two levels down: not the grid's properties.
        let props = box("ipco", box("ispe", [0, 0, 0, 0] + Self.be32(4000) + Self.be32(4000)))
        let twoDown = ftyp + box("meta", [0, 0, 0, 0] + Self.nestedIprp(levels: 2, around: props))
        #expect(Self.coded(twoDown) == (4000, 4000, 0), "the ispe walk still charges it")
    }

    /// `iloc` whose offset, length and index fields are 0 bytes wide and
    /// whose 4,096 items claim 65,535 extents each: every extent says the
    /// same, so one is read (all of them took 1.1 s of CPU for a 33 KB
    /// file, outside --decode-timeout, twice an estimate).
    @Test func extentsOfNoBytesAreReadOnce() {
        let items = 4096
        var iloc: [UInt8] = [1, 0, 0, 0, 0x00, 0x00] + Self.be16(UInt32(items))
        for i in 0..<items { iloc += Self.be16(UInt32(i + 2)) + Self.be16(0) + Self.be16(0) + Self.be16(0xFFFF) }
        let infe = box("infe", [2, 0, 0, 0] + Self.be16(1) + Self.be16(0) + Array("grid".utf8) + [0])
        let meta = box("meta", [0, 0, 0, 0] + box("hdlr", [UInt8](repeating: 0, count: 24)) + box("pitm", [0, 0, 0, 0] + Self.be16(1))
            + box("iinf", [0, 0, 0, 0] + Self.be16(1) + infe) + box("iloc", iloc))
        let file = box("ftyp", Array("avif".utf8) + [0, 0, 0, 0] + Array("mif1avif".utf8)) + meta
        var start = timespec(), end = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start)
        let got = Self.coded(file)
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end)
        let seconds = Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
        #expect(got == (0, 0, 0))
        #expect(seconds < 0.1, "\(seconds) s of CPU for a \(file.count)-byte header")
        // libavif 0.11 keeps an avifExtent (16 bytes) for each of them:
        // 4.2 GB, charged before it parses (HEIF: libheif refuses more
        // than 32 extents an item).
        #expect(estimate(file, .avif) >= 4096 * 65535 * 16, "\(estimate(file, .avif))")
        #expect(estimate(file, .heif) < 4 << 20)
    }

    @Test(arguments: cases) func handMadeGrids(_ c: GridCase) {
        let got = Self.coded(c.bytes)
        #expect(got == (c.width, c.height, c.tiles), "\(got)")
        // Every prefix of the file is read without a fault (ASan in the
        // fuzzers; here, only that it returns).
        for n in stride(from: 0, to: c.bytes.count, by: 7) { _ = Self.coded(Array(c.bytes.prefix(n))) }
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
