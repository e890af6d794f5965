/// Makes small, valid, distinct PNG files without any library (stored
/// deflate blocks), so end-to-end tests can serve hundreds of different
/// images whose bytes they know.
public enum TinyPNG {
    /// A `width` x `height` RGB image whose pixels derive from `seed`.
    public static func make(width: Int = 8, height: Int = 8, seed: Int) -> [UInt8] {
        var raw: [UInt8] = []
        raw.reserveCapacity((width * 3 + 1) * height)
        var state = UInt32(truncatingIfNeeded: seed &* 2654435761 &+ 12345)
        for _ in 0..<height {
            raw.append(0)  // filter: none
            for _ in 0..<(width * 3) {
                state = state &* 1103515245 &+ 12345
                raw.append(UInt8(truncatingIfNeeded: state >> 16))
            }
        }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var ihdr: [UInt8] = []
        ihdr += be32(UInt32(width)) + be32(UInt32(height))
        ihdr += [8, 2, 0, 0, 0]  // 8-bit, RGB, deflate, no filter, no interlace
        png += chunk("IHDR", ihdr)
        png += chunk("IDAT", zlibStored(raw))
        png += chunk("IEND", [])
        return png
    }

    static func be32(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let t = Array(type.utf8)
        return be32(UInt32(data.count)) + t + data + be32(crc32(t + data))
    }

    /// A zlib stream of stored (uncompressed) blocks: every inflated byte
    /// is the caller's, filter bytes included.
    public static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let n = min(65535, data.count - offset)
            let final: UInt8 = offset + n == data.count ? 1 : 0
            out.append(final)
            out += [UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += data[offset..<(offset + n)]
            offset += n
        } while offset < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return out + be32(b << 16 | a)
    }

    private static let table: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB88320 ^ (c >> 1) : c >> 1 }
        return c
    }

    public static func crc32(_ data: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in data { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
