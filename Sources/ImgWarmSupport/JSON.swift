import Foundation

package enum JSON {
    /// A JSON string literal.
    package static func string(_ s: String) -> String {
        var out = "\""
        out.reserveCapacity(s.utf8.count + 2)
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 || u.value == 0x7F || (u.value >= 0x2028 && u.value <= 0x2029) {
                    out += "\\u" + Hex.padded(u.value, digits: 4)
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }

    package static func optional(_ s: String?) -> String { s.map(string) ?? "null" }
}
