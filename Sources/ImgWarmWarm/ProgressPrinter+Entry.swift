import ImgWarmDecode
import ImgWarmReport
// In Warm, not in Report: the line is made of what Warm recorded (the
// decoded format, the response's facts).
extension ProgressPrinter {
    /// What `warm -v` adds to a downloaded entry's line:
    /// ` (webp 300x200, 5 frames, image/webp, Vary: Accept)`. `Vary: Accept`
    /// is named because the app, sending its own Accept header, may get
    /// another format than the one cached (docs/commands.md, Accept).
    public static func entryDetails(format: ImageFormat?, dimensions: (Int, Int)?, frames: Int?,
                                    response: ResponseFacts?) -> String {
        var parts: [String] = []
        if let format {
            var image = format.rawValue
            if let (w, h) = dimensions { image += " \(w)x\(h)" }
            parts.append(image)
            if let frames, frames != 1 { parts.append("\(frames) frames") }
        }
        if let type = response?.contentType { parts.append(type) }
        if response?.variesOnAccept == true { parts.append("Vary: Accept") }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")"
    }
}
