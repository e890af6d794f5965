#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

// AVIF (libavif + libaom), HEIC/HEIF (libheif) and JPEG XL (libjxl): the
// images come from the same libraries' encoders (CImageFixtures).

// validate(_:_:) and reason(_:): the shared helpers of ImageValidatorTests.swift.

private func limit(_ maxPixels: UInt64) -> ValidationOptions {
    var options = ValidationOptions()
    options.maxPixels = maxPixels
    return options
}

/// One encoded image of each kind, with what the validator must say.
struct ModernCase: CustomTestStringConvertible, Sendable {
    var name: String
    var bytes: [UInt8]
    var info: ImageInfo
    var testDescription: String { name }

    static let all: [ModernCase] = [
        ModernCase(name: "AVIF still", bytes: ModernFixture.avif(64, 48), info: ImageInfo(format: .avif, width: 64, height: 48, frames: 1)),
        ModernCase(name: "AVIF still with alpha", bytes: ModernFixture.avif(37, 23, alpha: true), info: ImageInfo(format: .avif, width: 37, height: 23, frames: 1)),
        ModernCase(name: "AVIF sequence", bytes: ModernFixture.avif(32, 24, frames: 5), info: ImageInfo(format: .avif, width: 32, height: 24, frames: 5)),
        ModernCase(name: "AVIF sequence with alpha", bytes: ModernFixture.avif(32, 24, frames: 3, alpha: true), info: ImageInfo(format: .avif, width: 32, height: 24, frames: 3)),
        ModernCase(name: "HEIC", bytes: ModernFixture.heic(64, 48), info: ImageInfo(format: .heic, width: 64, height: 48, frames: 1)),
        ModernCase(name: "HEIC with alpha", bytes: ModernFixture.heic(37, 23, alpha: true), info: ImageInfo(format: .heic, width: 37, height: 23, frames: 1)),
        ModernCase(name: "JPEG XL codestream", bytes: ModernFixture.jxl(64, 48), info: ImageInfo(format: .jxl, width: 64, height: 48, frames: 1)),
        ModernCase(name: "JPEG XL container", bytes: ModernFixture.jxl(37, 23, container: true), info: ImageInfo(format: .jxl, width: 37, height: 23, frames: 1)),
        ModernCase(name: "JPEG XL animated codestream", bytes: ModernFixture.jxl(32, 24, frames: 4), info: ImageInfo(format: .jxl, width: 32, height: 24, frames: 4)),
        ModernCase(name: "JPEG XL animated container", bytes: ModernFixture.jxl(32, 24, frames: 4, container: true), info: ImageInfo(format: .jxl, width: 32, height: 24, frames: 4)),
    ]

    var formatName: String { info.format.displayName }
    /// The container formats, whose last box can be patched to a cut.
    var hasBoxes: Bool { bytes.starts(with: [0, 0, 0]) }
}

@Suite struct DecodeModernFormats {
    @Test(arguments: ModernCase.all)
    func validImagesPassWithFormatSizeAndFrames(_ c: ModernCase) {
        #expect(validate(c.bytes) == .success(c.info))
        // --strict-formats accepts what is decoded.
        var strict = ValidationOptions()
        strict.strictFormats = true
        #expect(validate(c.bytes, strict) == .success(c.info))
    }

    @Test(arguments: ModernCase.all)
    func cutShortFailsNamingTheFormat(_ c: ModernCase) {
        // From inside the header to the last byte of the data.
        for cut in [40, c.bytes.count / 4, c.bytes.count / 2, c.bytes.count * 3 / 4, c.bytes.count - 1] {
            let r = reason(validate(Array(c.bytes.prefix(cut))))
            #expect(r?.hasPrefix("truncated \(c.formatName): ") == true, "cut at \(cut) of \(c.bytes.count): \(r ?? "passed")")
        }
    }

    @Test(arguments: ModernCase.all.filter(\.hasBoxes))
    func cutShortWithBoxSizesPatchedFails(_ c: ModernCase) {
        // The last box (mdat, or the JPEG XL container's jxlc, or its last
        // jxlp: libjxl writes an animation in parts) shrunk to end at the
        // cut: the container is consistent, the data is not.
        let last = ModernFixture.boxes(c.bytes).last!
        #expect(last.offset + last.size == c.bytes.count && ["mdat", "jxlc", "jxlp"].contains(last.type))
        for cut in [last.offset + 16, (last.offset + c.bytes.count) / 2, c.bytes.count - 1] {
            let patched = ModernFixture.cutWithPatchedSizes(c.bytes, to: cut)
            #expect(ModernFixture.boxes(patched).last.map { $0.offset + $0.size } == patched.count)
            let r = reason(validate(patched))
            #expect(r?.hasPrefix("truncated \(c.formatName): ") == true, "cut at \(cut) of \(c.bytes.count): \(r ?? "passed")")
        }
    }

    @Test(arguments: ModernCase.all)
    func pixelLimitAppliesBeforeDecoding(_ c: ModernCase) {
        let w = c.info.width!, h = c.info.height!
        #expect(reason(validate(c.bytes, limit(UInt64(w * h - 1)))) == "\(c.formatName) \(w)x\(h) exceeds the pixel limit of \(w * h - 1)")
        #expect(validate(c.bytes, limit(UInt64(w * h))) == .success(c.info))
    }

    @Test func decodersRunOnManyThreadsAtOnce() {
        // Validation runs on a pool of threads: each call owns its decoder,
        // and the libraries' shared state (libheif's plugin registry, aom's
        // CPU dispatch) is set up once, thread-safely.
        let cases = ModernCase.all
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8 * cases.count) { i in
            let c = cases[i % cases.count]
            if validate(c.bytes) != .success(c.info) { failures.withLock { $0 += 1 } }
        }
        #expect(failures.withLock { $0 } == 0)
    }

    @Test func damagedAV1DataFailsAVIF() {
        // libaom checks each tile's trailing bits (avif_validate.c says why
        // it decodes AVIF, not dav1d): a run of flipped bytes in the coded
        // data cannot pass.
        var avif = ModernFixture.avif(64, 48)
        let mdat = ModernFixture.boxes(avif).last!
        for i in (mdat.offset + mdat.size / 2)..<(mdat.offset + mdat.size / 2 + 16) { avif[i] ^= 0xFF }
        let r = reason(validate(avif))
        #expect(r?.hasPrefix("corrupt AVIF: ") == true, "\(r ?? "passed")")
    }
}

// MARK: animations: frame budget

@Suite struct DecodeModernAnimationBudget {
    // internal.h, iw_frames_over_budget: frames x canvas <= 10 x max_pixels.
    @Test func avifSequenceOverTheFrameBudgetIsRefusedFromTheContainer() {
        let avif = ModernFixture.avif(32, 32, frames: 12)
        #expect(validate(avif) == .success(ImageInfo(format: .avif, width: 32, height: 32, frames: 12)))
        #expect(reason(validate(avif, limit(1024)))
            == "AVIF frames add up to more than 10 times the pixel limit of 1024 (11264 pixels by frame 11)")
        #expect(validate(avif, limit(1229)) == .success(ImageInfo(format: .avif, width: 32, height: 32, frames: 12)))
    }

    @Test func jxlAnimationOverTheFrameBudgetStopsAtTheFrameThatBreaksIt() {
        let jxl = ModernFixture.jxl(32, 32, frames: 12, container: true)
        #expect(validate(jxl) == .success(ImageInfo(format: .jxl, width: 32, height: 32, frames: 12)))
        // libjxl gives frame headers one at a time: the 11th breaks it.
        #expect(reason(validate(jxl, limit(1024)))
            == "JPEG XL frames add up to more than 10 times the pixel limit of 1024 (11264 pixels by frame 11)")
    }
}

// MARK: decompression bombs: refused from the header, memory stays small

/// Peak resident memory of this process so far, in MB.
private func peakRSSMB() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss / 1024  // kilobytes on Linux
}

@Suite(.serialized) struct DecodeModernBombs {
    // A bomb that got as far as allocating would need gigabytes (60000 x
    // 60000 pixels of 4:2:0 is 5.4 GB); the peak may grow by little more
    // than the test's own images.
    static let rssSlackMB = 200

    @Test(arguments: [(ModernFixture.avif(64, 48), "AVIF"), (ModernFixture.heic(64, 48), "HEIC")])
    func ispeClaimingHugeDimensions(_ file: [UInt8], _ name: String) {
        let before = peakRSSMB()
        // Over libavif's and libheif's own side limit (32768), then within
        // it but over max_pixels.
        for (w, h) in [(60000, 60000), (20000, 20000)] as [(UInt32, UInt32)] {
            let bomb = ModernFixture.withISPE(file, width: w, height: h)
            #expect(reason(validate(bomb)) == "\(name) \(w)x\(h) exceeds the pixel limit of 100000000")
        }
        #expect(peakRSSMB() - before < Self.rssSlackMB)
    }

    @Test(arguments: [false, true])
    func jxlSizeHeaderClaimingHugeDimensions(_ container: Bool) {
        // 16x8193: the encoder writes an 18-bit height and a 9-bit width,
        // wide enough to claim 512x262144 (134 million pixels) in place.
        let file = ModernFixture.jxl(16, 8193, container: container)
        let start = container ? ModernFixture.boxes(file).last!.offset + 8 : 0
        let size = ModernFixture.jxlSize(file, codestreamAt: start)
        #expect((size.height, size.yBits, size.width, size.xBits) == (8193, 18, 16, 9))
        var bomb = file
        ModernFixture.putBits(&bomb, size.yBit, 18, 262_143)
        ModernFixture.putBits(&bomb, size.xBit, 9, 511)
        let before = peakRSSMB()
        #expect(reason(validate(bomb)) == "JPEG XL 512x262144 exceeds the pixel limit of 100000000")
        #expect(peakRSSMB() - before < Self.rssSlackMB)
    }

    @Test func av1HeaderLargerThanTheContainerSays() {
        // The container claims 8x8, the AV1 sequence header 64x48: libaom
        // has no size limit of its own, so the payload is refused when
        // read, before libaom allocates a frame (avif_validate.c).
        let avif = ModernFixture.withISPE(ModernFixture.avif(64, 48), width: 8, height: 8)
        #expect(reason(validate(avif, limit(1000))) == "AVIF 64x48 exceeds the pixel limit of 1000")
    }
}
