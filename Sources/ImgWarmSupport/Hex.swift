/// Hexadecimal, both ways: digests as the layouts name files (lowercase,
/// two digits a byte), numbers padded to a width (temp names, UUIDs,
/// escapes), and the value of a digit read from a URL or a name.
package enum Hex {
    private static let lowerDigits = Array("0123456789abcdef".utf8)
    private static let upperDigits = Array("0123456789ABCDEF".utf8)

    /// The ASCII digit of the low four bits of `nibble`.
    @inline(__always)
    package static func digit(_ nibble: UInt8, uppercase: Bool = false) -> UInt8 {
        (uppercase ? upperDigits : lowerDigits)[Int(nibble & 0x0F)]
    }

    /// Two digits a byte, in order: `md5().hex()`, `sha256().hex()`.
    package static func encode<Bytes: Sequence>(_ bytes: Bytes, uppercase: Bool = false) -> String where Bytes.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for b in bytes {
            out.append(digit(b >> 4, uppercase: uppercase))
            out.append(digit(b, uppercase: uppercase))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `value` in hex, at least `digits` wide (zeros in front).
    package static func padded<T: BinaryInteger>(_ value: T, digits: Int, uppercase: Bool = false) -> String {
        let s = String(value, radix: 16, uppercase: uppercase)
        return String(repeating: "0", count: max(0, digits - s.count)) + s
    }

    /// The value of one hex digit, either case; nil for anything else.
    package static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }
}
