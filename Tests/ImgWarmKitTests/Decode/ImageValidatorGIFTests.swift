import CGifReference
import CImageCodecs
import Testing

/// GIFs written code by code, for the LZW edge cases of the code walk in
/// Sources/CImageCodecs/gif_validate.c (iw_gif_lzw_frame).
enum LZWGIF {
    struct Frame {
        var width: Int
        var height: Int
        var codeSize = 2
        var codes: [Int]
        /// Data block size (the last block may be shorter).
        var blockSize = 255
        /// A zero-length block put after this many data bytes.
        var emptyBlockAfter: Int? = nil
        /// Blocks after the codes' own, before the block that ends the data.
        var extraBlocks: [[UInt8]] = []
        /// The zero-length block that ends the data.
        var terminated = true
    }

    /// The codes packed LSB first at the widths giflib reads them
    /// (dgif_lib.c, DGifDecompressInput: RunningCode goes up by one a code
    /// up to LZ_MAX_CODE + 2, the width by one bit when RunningCode passes
    /// 1 << width, up to LZ_BITS = 12; DGifDecompressLine's ClearCode
    /// branch starts over at codeSize + 1 bits).
    static func pack(codeSize: Int, codes: [Int]) -> [UInt8] {
        let clear = 1 << codeSize, eof = clear + 1
        var running = eof + 1, bits = codeSize + 1
        var out: [UInt8] = [], acc = 0, have = 0
        for code in codes {
            precondition(code < 1 << bits, "code \(code) does not fit the \(bits) bits it is read with")
            acc |= code << have
            have += bits
            while have >= 8 {
                out.append(UInt8(acc & 0xFF))
                acc >>= 8
                have -= 8
            }
            if code == clear {
                running = eof + 1
                bits = codeSize + 1
            } else if running < 4097 {
                running += 1
                if running > 1 << bits && bits < 12 { bits += 1 }
            }
        }
        if have > 0 { out.append(UInt8(acc & 0xFF)) }
        return out
    }

    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }

    /// GIF89a, a 2-colour global table, then each frame at 0,0.
    static func gif(_ frames: [Frame], trailer: Bool = true) -> [UInt8] {
        let w = frames.map(\.width).max() ?? 1, h = frames.map(\.height).max() ?? 1
        var b = Array("GIF89a".utf8) + le16(w) + le16(h) + [0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
        for f in frames {
            b += [0x2C] + le16(0) + le16(0) + le16(f.width) + le16(f.height) + [0, UInt8(f.codeSize)]
            let data = pack(codeSize: f.codeSize, codes: f.codes)
            var at = 0
            while at < data.count {
                var n = min(f.blockSize, data.count - at)
                if let e = f.emptyBlockAfter, at < e, at + n > e { n = e - at }
                b += [UInt8(n)] + data[at..<(at + n)]
                at += n
                if at == f.emptyBlockAfter { b.append(0) }
            }
            for extra in f.extraBlocks { b += [UInt8(extra.count)] + extra }
            if f.terminated { b.append(0) }
        }
        if trailer { b.append(0x3B) }
        return b
    }
}

struct GIFVerdict: Equatable, CustomStringConvertible {
    var status: Int32, width: UInt32, height: UInt32, frames: UInt32, reason: String
    var description: String { "\(status) \(width)x\(height) \(frames) frames \"\(reason)\"" }

    init(_ validate: (UnsafePointer<UInt8>?, Int, UInt64, UnsafeMutablePointer<iw_result>?) -> Int32,
         _ bytes: [UInt8], limit: UInt64) {
        var r = iw_result()
        status = bytes.withUnsafeBufferPointer { validate($0.baseAddress, $0.count, limit, &r) }
        width = r.width
        height = r.height
        frames = r.frames
        reason = withUnsafeBytes(of: r.reason) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }
}

@Suite struct DecodeGIFLZW {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var frames: [LZWGIF.Frame]
        var trailer = true
        /// What giflib says (and so the walk must): status and reason.
        var status: iw_status
        var reason = ""
        var testDescription: String { name }
    }

    // giflib 5.2.1, gif_err.c (GifErrorString): the reasons of the codes
    // dgif_lib.c sets in DGifDecompressLine / DGifBufferedInput.
    static let defect = "Image is defective, decoding aborted in frame 1"
    static let eofTooSoon = "Image EOF detected before image complete in frame 1"
    static let cut = "premature end of data in frame 1"

    /// Code size 0: ClearCode 1, EOFCode 2, codes from 3; each code the one
    /// being defined (RunningCode - 2): strings of 2, 3, ... 4094 pixels,
    /// the longest chain giflib's 4095-entry stack can hold with a table
    /// this size.
    static let longestChain: LZWGIF.Frame = {
        let codes = [1, 0] + Array(3...4095) + [4095, 4095]
        let pixels = 1 + (2...4094).reduce(0, +) + 2 * 4094
        return LZWGIF.Frame(width: 65535, height: pixels / 65535, codeSize: 0, codes: codes)
    }()

    static let cases: [Case] = [
        Case(name: "pixels, ClearCode first, EOFCode last",
             frames: [.init(width: 4, height: 1, codes: [4, 0, 1, 2, 3, 5])], status: IW_OK),
        Case(name: "no ClearCode first",
             frames: [.init(width: 2, height: 1, codes: [0, 1, 5])], status: IW_OK),
        Case(name: "no EOFCode: the frame is full first",
             frames: [.init(width: 2, height: 1, codes: [4, 0, 1])], status: IW_OK),
        Case(name: "a defined code (RunningCode - 3)",
             frames: [.init(width: 4, height: 1, codes: [4, 0, 1, 6, 5])], status: IW_OK),
        Case(name: "the code being defined (RunningCode - 2)",
             frames: [.init(width: 3, height: 1, codes: [4, 0, 6, 5])], status: IW_OK),
        Case(name: "a garbage code beyond RunningCode - 2 decodes as the previous code plus a pixel",
             frames: [.init(width: 3, height: 1, codes: [4, 0, 7, 5])], status: IW_OK),
        Case(name: "a garbage code right after ClearCode (no previous code)",
             frames: [.init(width: 2, height: 1, codes: [4, 7, 0, 5])], status: IW_CORRUPT, reason: defect),
        Case(name: "a garbage code first, with no ClearCode",
             frames: [.init(width: 2, height: 1, codes: [7, 0, 5])], status: IW_CORRUPT, reason: defect),
        Case(name: "EOFCode before the frame is full",
             frames: [.init(width: 4, height: 1, codes: [4, 0, 1, 5])], status: IW_CORRUPT, reason: eofTooSoon),
        Case(name: "EOFCode as the first code",
             frames: [.init(width: 1, height: 1, codes: [5])], status: IW_CORRUPT, reason: eofTooSoon),
        Case(name: "the pixel that fills the frame is in the middle of a long code: the rest is dropped",
             frames: [.init(width: 3, height: 1, codes: [4, 0, 1, 6, 6, 6, 5])], status: IW_OK),
        // 12 is garbage when read (code 8 is being defined); 9 is then
        // defined with prefix 12, which is defined three codes later: 9's
        // chain resolves only then.
        Case(name: "a chain through a code defined after it (forward reference)",
             frames: [.init(width: 15, height: 1, codes: [4, 0, 1, 2, 12, 1, 1, 1, 1, 9, 9, 5])], status: IW_OK),
        Case(name: "a chain through a code not defined yet",
             frames: [.init(width: 8, height: 1, codes: [4, 0, 1, 2, 12, 1, 9, 5])], status: IW_CORRUPT, reason: defect),
        // 7 is garbage when read (last code: 7), then defined from the last
        // code: its own prefix. giflib walks it until its stack is full.
        Case(name: "a code that is its own prefix (a cycle: the stack overflows)",
             frames: [.init(width: 16, height: 1, codes: [4, 0, 7, 0, 7, 5])], status: IW_CORRUPT, reason: defect),
        Case(name: "ClearCode mid-frame: the table and the width start over",
             frames: [.init(width: 11, height: 1, codes: [4, 0, 1, 2, 3, 0, 1, 2, 3, 4, 0, 6, 5])], status: IW_OK),
        Case(name: "ClearCode mid-frame: codes defined before it are garbage after it",
             frames: [.init(width: 11, height: 1, codes: [4, 0, 1, 2, 3, 0, 1, 2, 3, 4, 7, 5])],
             status: IW_CORRUPT, reason: defect),
        Case(name: "code size 0 (ClearCode 1): strings up to the longest chain the stack holds",
             frames: [longestChain], status: IW_OK),
        Case(name: "code size 8: 12-bit codes, the table full, codes read on at LZ_BITS",
             frames: [.init(width: 100, height: 50, codeSize: 8,
                            codes: [256] + (0..<4999).map { $0 % 256 } + [4095, 257])], status: IW_OK),
        Case(name: "code size 1",
             frames: [.init(width: 4, height: 1, codeSize: 1, codes: [2, 1, 0, 4, 3])], status: IW_OK),
        // giflib 5.2.1 dgif_lib.c DGifSetupDecompress: `if (BitsPerPixel > 8)
        // { GifFile->Error = D_GIF_ERR_READ_FAILED; /* somewhat bogus error
        // code */`. The file is whole (its trailer follows): the reason names
        // the code size, not a cut.
        Case(name: "code size 9 (giflib refuses it, with the error code of a failed read)",
             frames: [.init(width: 2, height: 1, codeSize: 9, codes: [512, 0, 1, 513])], status: IW_CORRUPT,
             reason: "LZW minimum code size 9 in frame 1 is above 8 (giflib refuses it)"),
        Case(name: "one-byte blocks",
             frames: [.init(width: 8, height: 1, codes: [4, 0, 1, 2, 3, 6, 7, 5], blockSize: 1)], status: IW_OK),
        Case(name: "a zero-length block while codes are still needed",
             frames: [.init(width: 8, height: 1, codes: [4, 0, 1, 2, 3, 0, 1, 2, 3, 5], blockSize: 2, emptyBlockAfter: 2)],
             status: IW_CORRUPT, reason: defect),
        Case(name: "data blocks after the last pixel are read and dropped",
             frames: [.init(width: 2, height: 1, codes: [4, 0, 1, 5], extraBlocks: [[1, 2, 3], Array(repeating: 0xFF, count: 255)])],
             status: IW_OK),
        Case(name: "codes after the last pixel (a garbage code and EOFCode) are not read",
             frames: [.init(width: 2, height: 1, codes: [4, 0, 1, 7, 5, 7])], status: IW_OK),
        Case(name: "no block ends the data: the drain reads past the end",
             frames: [.init(width: 2, height: 1, codes: [4, 0, 1, 5], terminated: false)], trailer: false,
             status: IW_TRUNCATED, reason: cut),
        Case(name: "the data ends inside the codes",
             frames: [.init(width: 64, height: 1, codes: [4, 0, 1, 2, 3], terminated: false)], trailer: false,
             status: IW_TRUNCATED, reason: cut),
        Case(name: "a second frame that fails",
             frames: [.init(width: 2, height: 1, codes: [4, 0, 1, 5]), .init(width: 2, height: 1, codes: [4, 7, 5])],
             status: IW_CORRUPT, reason: "Image is defective, decoding aborted in frame 2"),
        Case(name: "a second frame after a first with blocks to drain",
             frames: [.init(width: 2, height: 1, codes: [4, 0, 1, 5], extraBlocks: [[9, 9]]),
                      .init(width: 3, height: 1, codes: [4, 2, 6, 5])],
             status: IW_OK),
    ]

    @Test(arguments: cases) func lzwCheckAgreesWithGiflib(_ c: Case) {
        let gif = LZWGIF.gif(c.frames, trailer: c.trailer)
        for limit: UInt64 in [100_000_000, 2000] {
            let walk = GIFVerdict(iw_validate_gif, gif, limit: limit)
            let giflib = GIFVerdict(iwr_validate_gif_giflib, gif, limit: limit)
            #expect(walk == giflib, "pixel limit \(limit)")
        }
        // The case reaches the branch it is named after.
        let giflib = GIFVerdict(iwr_validate_gif_giflib, gif, limit: 100_000_000)
        #expect(giflib.status == Int32(c.status.rawValue))
        #expect(giflib.reason == c.reason)
        if c.status == IW_OK { #expect(giflib.frames == UInt32(c.frames.count)) }
    }

    /// Every cut of a few of the cases above, and every byte of their LZW
    /// data flipped: the same verdicts.
    @Test func cutsAndFlipsAgreeWithGiflib() {
        for c in Self.cases where c.frames.count == 1 && c.frames[0].codes.count < 100 {
            let gif = LZWGIF.gif(c.frames, trailer: c.trailer)
            var variants = (0..<gif.count).map { Array(gif.prefix($0)) }
            for at in 32..<gif.count {
                for bit in 0..<8 {
                    var b = gif
                    b[at] ^= 1 << bit
                    variants.append(b)
                }
            }
            for v in variants {
                let walk = GIFVerdict(iw_validate_gif, v, limit: 100_000_000)
                let giflib = GIFVerdict(iwr_validate_gif_giflib, v, limit: 100_000_000)
                #expect(walk == giflib, "\(c.name): \(v)")
            }
        }
    }
}
