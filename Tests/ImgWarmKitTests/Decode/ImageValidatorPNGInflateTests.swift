import CDeflate
import CImageCodecs
import Testing
import TestSupport
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// PNG/APNG image data is inflated by libdeflate first and by zlib only when
/// libdeflate's success cannot decide (png_validate.c, inflate_agree.c).
/// Every case here runs both paths (`iw_validate_png_using`, FAST and ZLIB,
/// the reference) and they must give the same status, size, frames and
/// reason. The streams are written bit by bit where no encoder writes them:
/// the places where libdeflate 1.14 reads what zlib 1.2.13 refuses
/// (libdeflate lib/deflate_decompress.c build_decode_table and its
/// offset/length tables, lib/decompress_template.h; zlib inflate.c states
/// TABLE and CODELENS, inftrees.c inflate_table, inffixed.h). For those the
/// test first checks that libdeflate does accept the stream, so the case
/// only passes when the fast path refuses to let that success decide.
@Suite struct DecodePNGInflate {
    struct Verdict: Equatable, CustomStringConvertible {
        var status: Int32
        var width, height, frames: UInt32
        var reason: String
        var description: String { "\(status) \(width)x\(height) \(frames) frames \(reason.debugDescription)" }
    }

    static func verdict(_ png: [UInt8], _ path: iw_png_inflater, maxPixels: UInt64 = 100_000_000) -> Verdict {
        var r = iw_result()
        let status = png.withUnsafeBufferPointer { iw_validate_png_using($0.baseAddress, $0.count, maxPixels, path, &r) }
        let reason = withUnsafeBytes(of: r.reason) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        return Verdict(status: status, width: r.width, height: r.height, frames: r.frames, reason: reason)
    }

    /// Both paths' verdict, which must be one.
    static func agreed(_ png: [UInt8], _ label: String, maxPixels: UInt64 = 100_000_000) -> Verdict {
        let fast = verdict(png, IW_PNG_INFLATE_FAST, maxPixels: maxPixels)
        let zlib = verdict(png, IW_PNG_INFLATE_ZLIB, maxPixels: maxPixels)
        #expect(fast == zlib, "\(label): fast path \(fast), zlib path \(zlib)")
        return zlib
    }

    /// libdeflate's own answer on a zlib stream and an exact output size.
    static func libdeflateInflates(_ stream: [UInt8], to count: Int) -> Bool {
        guard let d = libdeflate_alloc_decompressor() else { return false }
        defer { libdeflate_free_decompressor(d) }
        var out = [UInt8](repeating: 0, count: count)
        let result = stream.withUnsafeBytes { s in
            out.withUnsafeMutableBytes { o in libdeflate_zlib_decompress(d, s.baseAddress, s.count, o.baseAddress, count, nil) }
        }
        return result == LIBDEFLATE_SUCCESS
    }

    // MARK: images

    /// The filtered rows of a width x height RGB image (filter byte 0).
    static func rows(_ width: Int, _ height: Int) -> [UInt8] {
        (0..<height).flatMap { y in [UInt8(0)] + (0..<(3 * width)).map { UInt8(truncatingIfNeeded: $0 * 7 + y * 13) } }
    }

    /// An RGB PNG of the size whose single IDAT is `stream`.
    static func png(_ width: UInt32, _ height: UInt32, idat stream: [UInt8], interlaced: Bool = false) -> [UInt8] {
        let base = Fixture.png(width, height, .rgb, interlaced: interlaced)
        let chunks = Fixture.chunks(base)
        var out = base
        // One IDAT: drop any further ones libpng wrote, then replace the first.
        for (i, c) in chunks.enumerated().reversed() where c.type == "IDAT" && i != chunks.firstIndex(where: { $0.type == "IDAT" }) {
            out.removeSubrange(c.offset..<(c.dataStart + c.length + 4))
        }
        return Fixture.replacingChunk(out, Fixture.chunks(out).firstIndex { $0.type == "IDAT" }!, with: stream)
    }

    // MARK: zlib streams written by hand (RFC 1950, RFC 1951)

    struct Bits {
        var bytes: [UInt8] = []
        var count = 0
        /// value's low n bits, least significant first (header fields, extra bits).
        mutating func put(_ value: Int, _ n: Int) {
            for i in 0..<n {
                if count % 8 == 0 { bytes.append(0) }
                if (value >> i) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(1 << (count % 8)) }
                count += 1
            }
        }
        /// A Huffman codeword, most significant bit first.
        mutating func code(_ codeword: Int, _ length: Int) {
            for i in stride(from: length - 1, through: 0, by: -1) { put((codeword >> i) & 1, 1) }
        }
    }

    /// Canonical codewords of code lengths (RFC 1951, 3.2.2); -1 for unused symbols.
    static func canonical(_ lengths: [Int]) -> [Int] {
        var count = [Int](repeating: 0, count: 16)
        for l in lengths where l > 0 { count[l] += 1 }
        var next = [Int](repeating: 0, count: 16)
        var code = 0
        for bits in 1...15 {
            code = (code + (bits > 1 ? count[bits - 1] : 0)) << 1
            next[bits] = code
        }
        return lengths.map { l in
            guard l > 0 else { return -1 }
            defer { next[l] += 1 }
            return next[l]
        }
    }

    static let fixedLitLen = [Int](repeating: 8, count: 144) + [Int](repeating: 9, count: 112) + [Int](repeating: 7, count: 24) + [Int](repeating: 8, count: 8)
    static let fixedDist = [Int](repeating: 5, count: 32)

    /// What a block holds. A match names its symbols and extra bits
    /// itself (some symbols are the ones zlib refuses); copies/distance
    /// say what libdeflate makes of it, for the output and its Adler-32.
    enum Token {
        case literal(UInt8)
        case match(lengthSymbol: Int, lengthExtra: (value: Int, bits: Int), distanceSymbol: Int,
                   distanceBit: Int?, distanceExtra: (value: Int, bits: Int), copies: Int, distance: Int)
        /// The end-of-block codeword, or (single-codeword codes) its unused twin "1".
        case end(codeword: Int?)
    }

    /// A match of 3..10 bytes at distance 1..4 (no extra bits).
    static func near(_ length: Int, _ distance: Int) -> Token {
        .match(lengthSymbol: 254 + length, lengthExtra: (0, 0), distanceSymbol: distance - 1, distanceBit: nil,
               distanceExtra: (0, 0), copies: length, distance: distance)
    }

    struct Stream {
        var bits = Bits()
        var output: [UInt8] = []

        mutating func header(cmf: UInt8 = 0x78, flg: UInt8 = 0x01) { bits.put(Int(cmf), 8); bits.put(Int(flg), 8) }

        mutating func stored(_ data: [UInt8], final: Bool) {
            bits.put(final ? 1 : 0, 1)
            bits.put(0, 2)
            if bits.count % 8 != 0 { bits.put(0, 8 - bits.count % 8) }
            bits.put(data.count, 16)
            bits.put(~data.count & 0xFFFF, 16)
            for b in data { bits.put(Int(b), 8) }
            output += data
        }

        /// A Huffman block with the given codes (fixed when both are nil).
        mutating func huffman(_ tokens: [Token], final: Bool, litLen: [Int]? = nil, dist: [Int]? = nil,
                              precodeSymbols: [(Int, Int, Int)]? = nil) {
            bits.put(final ? 1 : 0, 1)
            let lit = litLen ?? DecodePNGInflate.fixedLitLen, dst = dist ?? DecodePNGInflate.fixedDist
            if litLen == nil {
                bits.put(1, 2)
            } else {
                bits.put(2, 2)
                dynamicHeader(lit, dst, precodeSymbols)
            }
            let litCodes = DecodePNGInflate.canonical(lit), distCodes = DecodePNGInflate.canonical(dst)
            for t in tokens {
                switch t {
                case .literal(let b):
                    bits.code(litCodes[Int(b)], lit[Int(b)])
                    output.append(b)
                case .match(let ls, let le, let ds, let dbit, let de, let copies, let distance):
                    bits.code(litCodes[ls], lit[ls])
                    bits.put(le.value, le.bits)
                    if let dbit { bits.put(dbit, 1) } else { bits.code(distCodes[ds], dst[ds]) }
                    bits.put(de.value, de.bits)
                    for _ in 0..<copies { output.append(output[output.count - distance]) }
                case .end(let codeword):
                    if let codeword { bits.put(codeword, 1) } else { bits.code(litCodes[256], lit[256]) }
                }
            }
        }

        /// HLIT, HDIST, HCLEN 19, a complete precode (0-12: 4 bits,
        /// 13-18: 5 bits), then each length as its own symbol, or the given
        /// precode symbols (symbol, extra value, extra bits) instead.
        mutating func dynamicHeader(_ lit: [Int], _ dist: [Int], _ symbols: [(Int, Int, Int)]?) {
            bits.put(lit.count - 257, 5)
            bits.put(dist.count - 1, 5)
            bits.put(19 - 4, 4)
            let preLens = (0..<19).map { $0 <= 12 ? 4 : 5 }
            for s in [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15] { bits.put(preLens[s], 3) }
            let pre = DecodePNGInflate.canonical(preLens)
            for (s, v, n) in symbols ?? (lit + dist).map({ ($0, 0, 0) }) {
                bits.code(pre[s], preLens[s])
                bits.put(v, n)
            }
        }

        /// The stream with its Adler-32 (of what libdeflate outputs).
        func finished() -> [UInt8] {
            var a: UInt32 = 1, b: UInt32 = 0
            for byte in output {
                a = (a + UInt32(byte)) % 65521
                b = (b + a) % 65521
            }
            let adler = b << 16 | a
            return bits.bytes + [UInt8(adler >> 24), UInt8((adler >> 16) & 0xFF), UInt8((adler >> 8) & 0xFF), UInt8(adler & 0xFF)]
        }
    }

    /// A fixed-code stream of the data as literals, with `extra` tokens
    /// spliced in at byte `at` (their output replaces as many data bytes).
    static func fixedStream(_ data: [UInt8], splice extra: [Token] = [], at: Int = 0, header: (UInt8, UInt8) = (0x78, 0x01)) -> [UInt8] {
        var s = Stream()
        s.header(cmf: header.0, flg: header.1)
        var tokens: [Token] = data.prefix(at).map { .literal($0) } + extra
        var covered = at
        for t in extra { if case .match(_, _, _, _, _, let copies, _) = t { covered += copies } else if case .literal = t { covered += 1 } }
        tokens += data.dropFirst(covered).map { .literal($0) }
        s.huffman(tokens + [.end(codeword: nil)], final: true)
        return s.finished()
    }

    /// A dynamic block of `data` (literal/length code: 0-255 of 9 bits,
    /// end of block and length 3 of 2 bits) where bytes 11-13 come from a
    /// match of 3 at distance 1 (the data is changed to match), its
    /// distance written as the one bit `distanceBit` under the distance
    /// code `dist`.
    static func oneMatchStream(_ data: [UInt8], dist: [Int], distanceBit: Int) -> [UInt8] {
        var repeated = data
        for k in 11..<14 { repeated[k] = repeated[10] }
        var s = Stream()
        s.header()
        s.huffman(repeated.prefix(11).map { .literal($0) }
                  + [.match(lengthSymbol: 257, lengthExtra: (0, 0), distanceSymbol: 0, distanceBit: distanceBit,
                            distanceExtra: (0, 0), copies: 3, distance: 1)]
                  + repeated.dropFirst(14).map { .literal($0) } + [.end(codeword: nil)],
                  final: true, litLen: [Int](repeating: 9, count: 256) + [2, 2], dist: dist)
        return s.finished()
    }

    // MARK: the table

    @Test func streamsBothLibrariesRead() {
        let data = Self.rows(8, 4)
        var cases: [(String, [UInt8])] = [
            ("stored blocks", TinyPNG.zlibStored(data)),
            ("fixed Huffman literals", Self.fixedStream(data)),
            ("fixed Huffman with matches", Self.fixedStream(data, splice: [Self.near(3, 3)], at: 10)),
            // libpng picks a smaller window for small images: the whole output fits in it.
            ("CINFO 2 (1 KiB window), 100 bytes", Self.fixedStream(data, header: (0x28, 0x15))),
        ]
        // One distance codeword of length 1, read as "0": both libraries agree.
        cases.append(("single distance codeword read as 0", Self.oneMatchStream(data, dist: [1], distanceBit: 0)))
        var empty = Stream()
        empty.header()
        // No distance code at all, and no match: both libraries agree.
        empty.huffman(data.map { .literal($0) } + [.end(codeword: nil)], final: true,
                      litLen: [Int](repeating: 9, count: 256) + [2, 2], dist: [0])
        cases.append(("empty distance code, no match", empty.finished()))
        for (label, stream) in cases {
            let png = Self.png(8, 4, idat: stream)
            #expect(Self.agreed(png, label) == Verdict(status: 0, width: 8, height: 4, frames: 1, reason: ""), "\(label)")
        }
    }

    /// Each of libdeflate's extensions: libdeflate inflates the stream to
    /// exactly the rows, zlib refuses it, and the fast path must not pass it.
    @Test func streamsOnlyLibdeflateReads() {
        let data = Self.rows(96, 4)  // 4 rows of 289 bytes
        var cases: [(String, [UInt8], String)] = []

        // Fixed code, length symbol 286 (libdeflate: 258 bytes).
        var run = data
        for i in 2..<260 { run[i] = run[1] }
        cases.append(("fixed code, length symbol 286",
                      Self.fixedStream(run, splice: [.match(lengthSymbol: 286, lengthExtra: (0, 0), distanceSymbol: 0, distanceBit: nil, distanceExtra: (0, 0), copies: 258, distance: 1)], at: 2),
                      "IDAT: invalid literal/length code"))

        // Dynamic header with 288 literal/length codes (HLIT 31).
        var wide = Stream()
        wide.header()
        wide.huffman(data.map { .literal($0) } + [.end(codeword: nil)], final: true,
                     litLen: [Int](repeating: 8, count: 224) + [Int](repeating: 9, count: 64), dist: [1, 1])
        cases.append(("288 literal/length codes", wide.finished(), "IDAT: too many length or distance symbols"))

        // A code length repeat (18: 11 + 127 zeros) running past the last length.
        var overrun = Stream()
        overrun.header()
        let lens = [Int](repeating: 9, count: 256) + [1]
        overrun.huffman(data.map { .literal($0) } + [.end(codeword: nil)], final: true, litLen: lens, dist: [0],
                        precodeSymbols: lens.map { ($0, 0, 0) } + [(18, 127, 7)])
        cases.append(("code length repeat past the end", overrun.finished(), "IDAT: invalid bit length repeat"))

        // An empty distance code, and a match (libdeflate: distance 1).
        cases.append(("empty distance code with a match", Self.oneMatchStream(data, dist: [0], distanceBit: 0), "IDAT: invalid distance code"))
        // One distance codeword of length 1, read as "1".
        cases.append(("single distance codeword read as 1", Self.oneMatchStream(data, dist: [1], distanceBit: 1), "IDAT: invalid distance code"))

        // A block whose only literal/length codeword (end of block) is read as "1".
        var oneLit = Stream()
        oneLit.header()
        oneLit.huffman([.end(codeword: 1)], final: false, litLen: [Int](repeating: 0, count: 256) + [1], dist: [1])
        oneLit.stored(data, final: true)
        cases.append(("single literal/length codeword read as 1", oneLit.finished(), "IDAT: invalid literal/length code"))

        for (label, stream, zlibReason) in cases {
            #expect(Self.libdeflateInflates(stream, to: data.count), "\(label): libdeflate should read it (the premise)")
            let v = Self.agreed(Self.png(96, 4, idat: stream), label)
            #expect(v == Verdict(status: 2, width: 96, height: 4, frames: 1, reason: zlibReason), "\(label): \(v)")
        }

        // Fixed code, distance symbol 30 (libdeflate: 24577 + 13 bits):
        // 64 rows of 385 bytes, a match 24,577 bytes back near the end.
        let big = Self.rows(128, 64)
        var far = big
        let at = 24_600
        for k in 0..<3 { far[at + k] = far[at + k - 24_577] }
        let stream = Self.fixedStream(far, splice: [.match(lengthSymbol: 257, lengthExtra: (0, 0), distanceSymbol: 30, distanceBit: nil, distanceExtra: (0, 13), copies: 3, distance: 24_577)], at: at)
        #expect(Self.libdeflateInflates(stream, to: far.count), "distance symbol 30: libdeflate should read it")
        let v = Self.agreed(Self.png(128, 64, idat: stream), "fixed code, distance symbol 30")
        #expect(v.reason == "IDAT: invalid distance code", "\(v)")
    }

    /// libpng's benign cases and the zlib header: whatever zlib's path says.
    @Test func damagedStreamsAgree() {
        let data = Self.rows(8, 4)
        var adler = TinyPNG.zlibStored(data)
        adler[adler.count - 1] ^= 0x55
        var noAdler = TinyPNG.zlibStored(data)
        noAdler.removeLast(4)
        let fdict: [UInt8] = [0x78, 0xBB, 0, 0, 0, 1] + Array(TinyPNG.zlibStored(data).dropFirst(2))
        let cases: [(String, [UInt8], Verdict)] = [
            ("stream ends early", TinyPNG.zlibStored(Array(data.prefix(60))),
             Verdict(status: 2, width: 8, height: 4, frames: 1, reason: "Not enough image data")),
            ("extra data after the rows", TinyPNG.zlibStored(data + [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
             Verdict(status: 0, width: 8, height: 4, frames: 1, reason: "")),
            // zlib reaches the Adler-32 inside the last row's call: an error.
            ("Adler-32 damaged", adler, Verdict(status: 2, width: 8, height: 4, frames: 1, reason: "IDAT: incorrect data check")),
            ("stream cut after the rows, before its Adler-32", noAdler,
             Verdict(status: 2, width: 8, height: 4, frames: 1, reason: "Not enough image data")),
            ("FDICT set", fdict, Verdict(status: 2, width: 8, height: 4, frames: 1, reason: "IDAT: missing LZ dictionary")),
            ("CINFO 8", [0x88, 0x1C] + Array(TinyPNG.zlibStored(data).dropFirst(2)),
             Verdict(status: 2, width: 8, height: 4, frames: 1, reason: "IDAT: invalid window size (libpng)")),
            ("FCHECK wrong", [0x78, 0x02] + Array(TinyPNG.zlibStored(data).dropFirst(2)),
             Verdict(status: 2, width: 8, height: 4, frames: 1, reason: "IDAT: incorrect header check")),
            ("a filter byte of 5", TinyPNG.zlibStored([5] + Array(data.dropFirst())),
             Verdict(status: 2, width: 8, height: 4, frames: 1, reason: "bad adaptive filter value")),
        ]
        for (label, stream, want) in cases {
            #expect(Self.agreed(Self.png(8, 4, idat: stream), label) == want, "\(label)")
        }
        // The damaged Adler-32 in an IDAT of its own: libpng meets it only
        // after the last row (png_read_finish_IDAT), where it is benign.
        let late = Fixture.insertingChunk(Self.png(8, 4, idat: Array(adler.dropLast(4))), "IDAT", Array(adler.suffix(4)), before: "IEND")
        #expect(Self.agreed(late, "Adler-32 damaged, after the last row") == Verdict(status: 0, width: 8, height: 4, frames: 1, reason: ""))
        var fixedAdler = Self.fixedStream(data)
        fixedAdler[fixedAdler.count - 2] ^= 0x10
        let lateFixed = Fixture.insertingChunk(Self.png(8, 4, idat: Array(fixedAdler.dropLast(4))), "IDAT", Array(fixedAdler.suffix(4)), before: "IEND")
        #expect(Self.agreed(lateFixed, "fixed Huffman, Adler-32 damaged, after the last row") == Verdict(status: 0, width: 8, height: 4, frames: 1, reason: ""))

        // CINFO 0 (a 256-byte window) and a match 300 bytes back: zlib's
        // window is smaller than the image, so only zlib can say.
        let wide = Self.rows(96, 4)
        var far = wide
        for k in 0..<3 { far[600 + k] = far[300 + k] }
        let stream = Self.fixedStream(far, splice: [.match(lengthSymbol: 257, lengthExtra: (0, 0), distanceSymbol: 16, distanceBit: nil, distanceExtra: (43, 7), copies: 3, distance: 300)],
                                      at: 600, header: (0x08, 0x1D))
        #expect(Self.libdeflateInflates(stream, to: far.count))
        #expect(Self.agreed(Self.png(96, 4, idat: stream), "CINFO 0, distance 300")
            == Verdict(status: 2, width: 96, height: 4, frames: 1, reason: "IDAT: invalid distance too far back"))
    }

    /// IDAT data split over several chunks, interlaced images, APNG frames.
    @Test func chunkedInterlacedAndAnimatedAgree() {
        let png = Fixture.png(37, 23, .rgba, interlaced: true)
        #expect(Self.agreed(png, "interlaced") == Verdict(status: 0, width: 37, height: 23, frames: 1, reason: ""))
        // The IDAT cut into 3 chunks (and an empty one).
        let idat = Fixture.chunks(png).firstIndex { $0.type == "IDAT" }!
        let data = Fixture.chunkData(png, idat)
        let parts = [Array(data.prefix(5)), [], Array(data.dropFirst(5).prefix(40)), Array(data.dropFirst(45))]
        var split = Fixture.replacingChunk(png, idat, with: parts[0])
        for part in parts.dropFirst() { split = Fixture.insertingChunk(split, "IDAT", part, before: "IEND") }
        #expect(Self.agreed(split, "IDAT in 4 chunks") == Verdict(status: 0, width: 37, height: 23, frames: 1, reason: ""))
        // Another chunk between the IDATs: the stream is cut there.
        var between = Fixture.replacingChunk(png, idat, with: parts[0])
        between = Fixture.insertingChunk(between, "tEXt", Array("a\0b".utf8), before: "IEND")
        between = Fixture.insertingChunk(between, "IDAT", Array(data.dropFirst(5)), before: "IEND")
        #expect(Self.agreed(between, "tEXt between IDATs").reason == "Not enough image data")

        // APNG: the last frame's stream, read only by libdeflate.
        let apng = Fixture.apng(20, 10, frames: 3)
        #expect(Self.agreed(apng, "APNG") == Verdict(status: 0, width: 20, height: 10, frames: 3, reason: ""))
        let frameRows = DecodeAPNG.rows(10)
        let stream = Self.oneMatchStream(frameRows, dist: [0], distanceBit: 0)
        #expect(Self.libdeflateInflates(stream, to: frameRows.count))
        let bad = Fixture.replacingChunk(apng, DecodeAPNG.lastFdAT, with: DecodeAPNG.fdAT(sequence: 4, stream))
        #expect(Self.agreed(bad, "APNG frame: empty distance code with a match")
            == Verdict(status: 2, width: 20, height: 10, frames: 3, reason: "APNG frame 3: fdAT: invalid distance code"))
        let good = Fixture.replacingChunk(apng, DecodeAPNG.lastFdAT, with: DecodeAPNG.fdAT(sequence: 4, Self.fixedStream(frameRows)))
        #expect(Self.agreed(good, "APNG frame: fixed code") == Verdict(status: 0, width: 20, height: 10, frames: 3, reason: ""))
    }

    /// Seeded damage to real libpng streams, with chunk CRCs made right so
    /// the damage reaches the inflaters: both paths, every time.
    @Test func mutatedStreamsAgree() {
        let seeds = [Fixture.png(24, 16, .rgba), Fixture.png(24, 16, .palette, interlaced: true, trns: true),
                     Fixture.png(40, 30, .gray, depth: 16), Fixture.apng(16, 8, frames: 2)]
        var rng = SeededRandom(seed: 0x15_0D_EF)
        var differ = 0, passes = 0
        for seed in seeds {
            for _ in 0..<1500 {
                var m = Mutation.mutate(seed, &rng)
                for c in Fixture.chunks(m) where c.dataStart + c.length + 4 <= m.count {
                    Fixture.put32(&m, c.dataStart + c.length, Fixture.crc32(m[(c.offset + 4)..<(c.dataStart + c.length)]))
                }
                let fast = Self.verdict(m, IW_PNG_INFLATE_FAST), zlib = Self.verdict(m, IW_PNG_INFLATE_ZLIB)
                if fast != zlib { differ += 1 }
                if zlib.status == 0 { passes += 1 }
                #expect(fast == zlib, "mutant \(m.count) bytes: \(fast) vs \(zlib)")
                if differ > 3 { return }
            }
        }
        #expect(passes > 0)
    }
}
