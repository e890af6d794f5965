import CImageFixtures
import Foundation
import Testing
import TestSupport

/// The decode bounds against hostile images, through the real binary:
/// estimates a header cannot lie to (a stray byte before a JPEG's frame
/// header, a false `ispe` in AVIF and HEIC), text chunks that inflate to
/// gigabytes, and a JPEG of thousands of scans stopped by
/// `--decode-timeout`. The images are made here, not committed.
@Suite(.serialized) struct DecodeBoundsTests {
    static let mib: UInt64 = 1 << 20

    static func bytes(_ make: (UnsafeMutablePointer<iwf_buffer>) -> Int32) -> [UInt8] {
        var buffer = iwf_buffer()
        precondition(make(&buffer) == 0, "fixture encoder failed")
        defer { iwf_free(&buffer) }
        return Array(UnsafeBufferPointer(start: buffer.data, count: buffer.len))
    }

    /// libjpeg skips bytes other than 0xFF before a marker (libjpeg-turbo,
    /// src/jdmarker.c, next_marker) and decodes the file in full: its
    /// estimate must be the same as without the byte.
    @Test func aStrayByteAfterSOIIsSizedAsLibjpegReadsIt() throws {
        let clean = Self.bytes { iwf_jpeg_smooth(4000, 4000, 1, $0) }
        var stray = clean
        stray.insert(0x00, at: 2)
        let f = try WarmFixture()
        f.server.setFile("/clean.jpg", bytes: clean, contentType: "image/jpeg")
        f.server.setFile("/stray.jpg", bytes: stray, contentType: "image/jpeg")
        let manifest = f.writeManifest([f.server.url("/clean.jpg"), f.server.url("/stray.jpg")])
        let r = try f.warm([manifest, "--decode-memory", "50MiB"])
        #expect(r.status == 1)
        let reason = "JPEG 4000x4000 needs an estimated 91.9 MiB to decode, more than the decode memory budget of 50.0 MiB (--decode-memory)"
        for path in ["/clean.jpg", "/stray.jpg"] {
            #expect(r.stderr.contains("\(f.server.url(path)): \(reason)"), "\(path): \(r.stderr)")
        }
        #expect(r.stdout.contains("errors: 2 too-large"), "\(r.stdout)")
    }

    /// Hundreds of zTXt and iTXt chunks that inflate to 16 MB each (libpng's
    /// former chunk limit): text is skipped, never inflated, so the run
    /// stays within the decode memory budget above the run without
    /// decoding.
    @Test func compressedTextChunksAreNeverInflated() throws {
        let time = try neededTool("time", for: "the peak RSS of the binary")
        let ztxt = Self.bytes { iwf_png_text_bomb(200, 16 << 20, 0, $0) }
        let itxt = Self.bytes { iwf_png_text_bomb(200, 16 << 20, 1, $0) }
        #expect(ztxt.count < 4_000_000, "\(ztxt.count) bytes")
        let f = try WarmFixture()
        f.server.setFile("/z.png", bytes: ztxt, contentType: "image/png")
        f.server.setFile("/i.png", bytes: itxt, contentType: "image/png")
        let manifest = f.writeManifest([f.server.url("/z.png"), f.server.url("/i.png")])
        func warm(_ extra: [String]) throws -> MeasuredRun {
            try MeasuredRun.run(["warm", manifest, "--cache", f.cache, "--progress", "none", "--refresh"] + extra, gnuTime: time)
        }
        let baseline = try warm(["--no-validate"])
        #expect(baseline.status == 0, "\(baseline.stderr)")
        let bounded = try warm(["--decode-memory", "64MiB"])
        #expect(bounded.status == 0, "\(bounded.stderr)")
        #expect(bounded.peakRSS <= baseline.peakRSS + 64 * Self.mib,
                "peak RSS \(bounded.peakRSS / Self.mib) MiB, baseline \(baseline.peakRSS / Self.mib) MiB")
        #expect(bounded.cpuSeconds < 5, "\(bounded.cpuSeconds) s of CPU")
        print("text bomb: 2 PNGs of 200 x 16 MB text: baseline \(baseline.peakRSS / Self.mib) MiB, validated \(bounded.peakRSS / Self.mib) MiB, \(bounded.cpuSeconds) s CPU")
    }

    /// Overwrites each `type` box's width and height, at `offset` into its
    /// payload (16-bit or 32-bit sides, or 16.16 fixed point), with 16.
    /// `tkhd`: 16.16 sides after 76 bytes of a version 0 box, 88 of a
    /// version 1 (ISO/IEC 14496-12 8.3.2); sample entries only inside
    /// `stsd` (an item's `infe` names `av01` too).
    static func patch(_ data: inout [UInt8], _ type: String, offset: Int, width: Int) {
        let tag = Array(type.utf8)
        var i = 4
        var afterStsd = false
        while i + 4 <= data.count {
            if Array(data[i..<(i + 4)]) == Array("stsd".utf8) { afterStsd = true }
            if Array(data[i..<(i + 4)]) == tag, type != "av01" || afterStsd {
                let at = i + 4 + (type == "tkhd" && data[i + 4] == 1 ? 88 : offset)
                let value: [UInt8] = width == 2 ? [0, 16] : width == 4 ? [0, 0, 0, 16] : [0, 16, 0, 0]
                let step = width == 16 ? 4 : width
                if at + 2 * step <= data.count {
                    data.replaceSubrange(at..<(at + step), with: value)
                    data.replaceSubrange((at + step)..<(at + 2 * step), with: value)
                }
            }
            i += 1
        }
    }

    /// An AVIF sequence of 512x512 frames whose `ispe` says 16x16: charged
    /// at its track's size; with the track's sizes false too, the AV1
    /// sequence header's size is re-checked before libaom decodes a frame.
    @Test func anAVIFSequenceWithAFalseIspeIsChargedAtItsRealSize() throws {
        let avif = Self.bytes { iwf_avif(512, 512, 2, 0, $0) }
        var ispeOnly = avif
        Self.patch(&ispeOnly, "ispe", offset: 4, width: 4)
        var allSizes = ispeOnly
        Self.patch(&allSizes, "tkhd", offset: 76, width: 16)
        // The av01 sample entry: width and height at 24 of its payload.
        Self.patch(&allSizes, "av01", offset: 24, width: 2)
        let f = try WarmFixture()
        f.server.setFile("/ispe.avif", bytes: ispeOnly, contentType: "image/avif")
        f.server.setFile("/all.avif", bytes: allSizes, contentType: "image/avif")
        let manifest = f.writeManifest([f.server.url("/ispe.avif"), f.server.url("/all.avif")])
        let report = f.dir + "/report.json"
        // 8.25 MiB + 512 x 512 x 16 bytes: 12.2 MiB; 16x16 would be 8.3 MiB.
        let r = try f.warm([manifest, "--decode-memory", "10MiB", "--report", report])
        #expect(r.status == 1, "\(r.stderr)")
        let entries = try f.report(report).entries
        for name in ["/ispe.avif", "/all.avif"] {
            let entry = try #require(entries.first { $0["url"] as? String == f.server.url(name) })
            #expect(entry["error"] as? String == "too-large", "\(name): \(entry)")
        }
        #expect(r.stderr.contains("\(f.server.url("/ispe.avif")): AVIF 512x512 needs an estimated 12.2 MiB"), "\(r.stderr)")
        #expect(r.stderr.contains("\(f.server.url("/all.avif")): AVIF 512x512 by the AV1 sequence header needs an estimated"), "\(r.stderr)")
        #expect(f.cacheFiles().isEmpty)
    }

    /// A HEIC whose `ispe` says 16x16 over 512x512 HEVC: charged at the
    /// coded size of its sequence parameter set.
    @Test func aHEICWithAFalseIspeIsChargedAtItsCodedSize() throws {
        var heic = Self.bytes { iwf_heic(512, 512, 0, $0) }
        Self.patch(&heic, "ispe", offset: 4, width: 4)
        let f = try WarmFixture()
        f.server.setFile("/a.heic", bytes: heic, contentType: "image/heic")
        let manifest = f.writeManifest([f.server.url("/a.heic")])
        // 2.25 MiB + 512 x 512 x 6 bytes: 3.8 MiB; 16x16 would be 2.3 MiB.
        let r = try f.warm([manifest, "--decode-memory", "3MiB"])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("HEIC 512x512 needs an estimated 3.8 MiB to decode"), "\(r.stderr)")
        #expect(r.stdout.contains("errors: 1 too-large"), "\(r.stdout)")
    }

    /// An AVIF grid of 3 x 2 tiles of 256x192 whose grid item's `ispe` says
    /// 16x16: charged at the grid's 768x384 canvas and a decoder a tile
    /// (8.25 MiB + 768 x 384 x 16 bytes + 6 x 2 MiB: 24.8 MiB; the largest
    /// `ispe`, a tile's, would give 9.0 MiB and let libavif decode it).
    @Test func anAVIFGridWithAFalseIspeIsChargedAtItsCanvas() throws {
        var grid = Self.bytes { iwf_avif_grid(256, 192, 3, 2, $0) }
        let claim = Array("ispe".utf8) + [0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1, 128]
        let at = try #require((0...(grid.count - claim.count)).first { Array(grid[$0..<($0 + claim.count)]) == claim })
        grid.replaceSubrange((at + 8)..<(at + 16), with: [0, 0, 0, 16, 0, 0, 0, 16])
        let f = try WarmFixture()
        f.server.setFile("/grid.avif", bytes: grid, contentType: "image/avif")
        let manifest = f.writeManifest([f.server.url("/grid.avif")])
        let r = try f.warm([manifest, "--decode-memory", "20MiB"])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("\(f.server.url("/grid.avif")): AVIF 768x384 needs an estimated 24."), "\(r.stderr)")
        #expect(r.stdout.contains("errors: 1 too-large"), "\(r.stdout)")
    }

    /// A progressive JPEG of 2,112 scans, each a pass over every block:
    /// stopped by --decode-timeout in warm (failed as too-complex, not on
    /// the failed-URL list) and in cache verify (not checked, kept).
    @Test func aJPEGOfThousandsOfScansIsStoppedByTheTimeout() throws {
        let time = try neededTool("time", for: "the CPU time and peak RSS of the binary")
        let jpeg = Self.bytes { iwf_jpeg_smooth(3000, 3000, 2, $0) }
        let f = try WarmFixture()
        let url = f.server.url("/scans.jpg")
        f.server.setFile("/scans.jpg", bytes: jpeg, contentType: "image/jpeg")
        let manifest = f.writeManifest([url])
        let report = f.dir + "/report.json"
        let warm = try MeasuredRun.run(["warm", manifest, "--cache", f.cache, "--progress", "none", "--decode-memory", "64MiB",
                                        "--decode-timeout", "1s", "--report", report], gnuTime: time)
        #expect(warm.status == 1, "\(warm.stderr)")
        #expect(warm.stderr.contains("\(url): JPEG 3000x3000 took "), "\(warm.stderr)")
        #expect(warm.stderr.contains("s of CPU to decode, over --decode-timeout 1s (stopped in scan "), "\(warm.stderr)")
        #expect(warm.stdout.contains("errors: 1 too-complex"), "\(warm.stdout)")
        #expect(warm.cpuSeconds < 4, "\(warm.cpuSeconds) s of CPU")
        #expect(try f.report(report).entries.first?["error"] as? String == "too-complex")
        let failed = try BinaryRunner.run(["cache", "failed", "--json", "--cache", f.cache])
        let list = try JSONSerialization.jsonObject(with: Data(failed.stdout.utf8)) as? [Any]
        #expect(list?.isEmpty == true, "\(failed.stdout)")
        print("decode timeout: 3000x3000 JPEG of 2,112 scans, warm --decode-timeout 1s: \(warm.cpuSeconds) s CPU, \(warm.peakRSS / Self.mib) MiB")

        // Stored without decoding, then verified: listed, kept.
        let store = try f.warm([manifest, "--no-validate"])
        #expect(store.status == 0, "\(store.stderr)")
        #expect(f.cacheFiles().count == 1)
        let verify = try MeasuredRun.run(["cache", "verify", "--cache", f.cache, "--delete", "--decode-memory", "64MiB",
                                          "--decode-timeout", "1s"], gnuTime: time)
        #expect(verify.status == 1)
        #expect(verify.stdout.contains(": not checked: over --decode-timeout, kept; JPEG 3000x3000 took "), "\(verify.stdout)")
        #expect(verify.stdout.contains("1 not checked (over --decode-timeout)"), "\(verify.stdout)")
        #expect(verify.cpuSeconds < 4, "\(verify.cpuSeconds) s of CPU")
        #expect(f.cacheFiles().count == 1, "never deleted")
        print("decode timeout: cache verify --decode-timeout 1s: \(verify.cpuSeconds) s CPU, \(verify.peakRSS / Self.mib) MiB")
    }

    static func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { be32(8 + payload.count) + Array(type.utf8) + payload }

    /// Hostile ISO-BMFF headers, written here byte by byte (ISO/IEC
    /// 14496-12 8.11, ISO/IEC 23008-12 9.3), as AVIF and as HEIC:
    /// 100,000 `iprp` boxes one inside the other (800 KB: the grid walk
    /// followed them down and overflowed the decoding thread's stack,
    /// killing the run with SIGSEGV), and an `iloc` of 4,096 items of
    /// 65,535 extents each with fields 0 bytes wide (a second of CPU per
    /// estimate before). `warm` fails each as a bad image and goes on;
    /// `cache verify --decode-memory 64MiB` checks them all in bounded
    /// time and memory.
    @Test(.needsTools("time", for: "the CPU time and peak RSS of the binary"))
    func hostileBoxNestsAndExtentListsFailAsBadImages() throws {
        let time = try neededTool("time", for: "the CPU time and peak RSS of the binary")
        let hdlr = Self.box("hdlr", [UInt8](repeating: 0, count: 8) + Array("pict".utf8) + [UInt8](repeating: 0, count: 13))
        let levels = 100_000
        var nest: [UInt8] = []
        nest.reserveCapacity(levels * 8)
        for level in 0..<levels { nest += Self.be32((levels - level) * 8) + Array("iprp".utf8) }
        let nested = Self.box("meta", [0, 0, 0, 0] + hdlr + Self.box("pitm", [0, 0, 0, 0] + Self.be16(1)) + nest)
        var iloc: [UInt8] = [1, 0, 0, 0, 0x00, 0x00] + Self.be16(4096)
        for i in 0..<4096 { iloc += Self.be16(i + 2) + Self.be16(0) + Self.be16(0) + Self.be16(0xFFFF) }
        let infe = Self.box("infe", [2, 0, 0, 0] + Self.be16(1) + Self.be16(0) + Array("grid".utf8) + [0])
        let extents = Self.box("meta", [0, 0, 0, 0] + hdlr + Self.box("pitm", [0, 0, 0, 0] + Self.be16(1))
            + Self.box("iinf", [0, 0, 0, 0] + Self.be16(1) + infe) + Self.box("iloc", iloc))
        // 20,000 items of one 0-byte extent (iloc version 2): libavif 0.11
        // looks each up among those before it, minutes of CPU at 500,000.
        var flood: [UInt8] = [2, 0, 0, 0, 0x00, 0x00] + Self.be32(20_000)
        for i in 0..<20_000 { flood += Self.be32(i + 2) + Self.be16(0) + Self.be16(0) + Self.be16(1) }
        let items = Self.box("meta", [0, 0, 0, 0] + hdlr + Self.box("pitm", [0, 0, 0, 0] + Self.be16(1))
            + Self.box("iinf", [0, 0, 0, 0] + Self.be16(1) + infe) + Self.box("iloc", flood))
        let f = try WarmFixture()
        var urls: [String] = []
        for (brand, ext) in [("avif", "avif"), ("heic", "heic")] {
            let ftyp = Self.box("ftyp", Array(brand.utf8) + [0, 0, 0, 0] + Array("mif1".utf8) + Array(brand.utf8))
            for (name, meta) in [("nested", nested), ("extents", extents), ("items", items)] {
                f.server.setFile("/\(name).\(ext)", bytes: ftyp + meta, contentType: "image/\(ext)")
                urls.append(f.server.url("/\(name).\(ext)"))
            }
        }
        let manifest = f.writeManifest(urls)
        let warm = try MeasuredRun.run(["warm", manifest, "--cache", f.cache, "--progress", "none", "--decode-memory", "64MiB"],
                                       gnuTime: time)
        #expect(warm.status == 1, "status \(warm.status): \(warm.stderr)")
        // The AVIF extents and items need more than --decode-memory for
        // libavif's parse alone (8.0 GiB; 20,000 items of 4 KiB).
        #expect(warm.stdout.contains("errors: 4 bad-image, 2 too-large"), "\(warm.stdout)")
        #expect(warm.stderr.contains("\(f.server.url("/extents.avif")): AVIF needs an estimated 8.0 GiB"), "\(warm.stderr)")
        #expect(warm.stderr.contains("\(f.server.url("/items.avif")): AVIF needs an estimated 86.7 MiB"), "\(warm.stderr)")
        // With the memory for them, the items are too many to parse.
        let roomy = try MeasuredRun.run(["warm", f.writeManifest([f.server.url("/items.avif")], name: "items.txt"), "--cache", f.cache,
                                         "--progress", "none", "--decode-memory", "512MiB", "--retry-failed"], gnuTime: time)
        #expect(roomy.status == 1 && roomy.stdout.contains("errors: 1 too-complex"), "\(roomy.stdout)")
        #expect(roomy.stderr.contains("20001 item entries in meta, over 16384"), "\(roomy.stderr)")
        #expect(roomy.cpuSeconds < 2, "\(roomy.cpuSeconds) s of CPU")
        // Stored without decoding (they are on the failed-URL list), then verified.
        let store = try f.warm([manifest, "--no-validate", "--retry-failed"])
        #expect(store.status == 0, "\(store.stderr)")
        let verify = try MeasuredRun.run(["cache", "verify", "--cache", f.cache, "--decode-memory", "64MiB"], gnuTime: time)
        #expect(verify.status == 1, "status \(verify.status): \(verify.stderr)")
        #expect(verify.stdout.contains("4 broken, 2 not checked (over --decode-memory)"), "\(verify.stdout)")
        #expect(verify.cpuSeconds < 2, "\(verify.cpuSeconds) s of CPU")
        #expect(verify.peakRSS < 150 * Self.mib, "peak RSS \(verify.peakRSS / Self.mib) MiB")
        print("hostile ISO-BMFF headers: cache verify --decode-memory 64MiB: \(verify.cpuSeconds) s CPU, \(verify.peakRSS / Self.mib) MiB")
    }
}
