#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CImageCodecs

/// Runs the C decoders of CImageCodecs and turns their status into the
/// one-line reasons of `ValidationFailure`.
enum CodecBridge {
    typealias Decoder = (UnsafePointer<UInt8>?, Int, UInt64, UnsafeMutablePointer<iw_result>?) -> Int32

    /// The one place that says which formats are decoded here: a format
    /// with a decoder is decoded in full; one without passes on its
    /// signature and header (`ImageHeader`), unless formats are strict.
    static func decoder(for format: ImageFormat) -> Decoder? {
        switch format {
        case .png: return iw_validate_png
        case .jpeg: return iw_validate_jpeg
        case .gif: return iw_validate_gif
        case .webp: return iw_validate_webp
        case .avif: return iw_validate_avif
        // libheif reads both: HEVC (libde265) and AV1-coded HEIF alike.
        case .heic, .heif: return iw_validate_heif
        case .jxl: return iw_validate_jxl
        case .bmp, .ico, .tiff, .pdf, .svg, .unknown: return nil
        }
    }

    /// `memoryShare`: the bytes of the decode memory budget the image
    /// holds, against which the decoder's own size is re-checked (0: no
    /// budget); `cpuSeconds`: the CPU time the decoder may take.
    static func decode(_ format: ImageFormat, _ bytes: UnsafeRawBufferPointer, maxPixels: UInt64,
                       memoryShare: UInt64 = 0, cpuSeconds: Double? = nil) -> Result<ImageInfo, ValidationFailure> {
        guard let decoder = decoder(for: format) else {
            preconditionFailure("\(format) is not decoded by CImageCodecs")
        }
        var result = iw_result()
        let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let started = ThreadCPUClock.nanoseconds()
        iw_set_thread_limits(memoryShare, cpuSeconds.map { UInt64(max(1, $0 * 1e9)) } ?? 0)
        let status = iw_status(rawValue: UInt32(bitPattern: decoder(base, bytes.count, maxPixels, &result)))
        iw_set_thread_limits(0, 0)
        let reason = withUnsafeBytes(of: result.reason) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        let width = Int(result.width), height = Int(result.height)
        if status == IW_TOO_COMPLEX {
            let spent = Double(ThreadCPUClock.nanoseconds() &- started) / 1e9
            // Refused for its structure before the time ran out (libavif's
            // quadratic item parse), not stopped by --decode-timeout.
            if spent < (cpuSeconds ?? .infinity) {
                return .failure(ValidationFailure("\(format.displayName) is too complex to decode: \(reason)", kind: .tooComplex))
            }
            return .failure(tooComplex(format, width: width, height: height, spent: spent, limit: cpuSeconds ?? 0,
                                       where: reason))
        }
        guard let failure = failure(status: status, format: format, reason: reason, width: width, height: height,
                                    maxPixels: maxPixels) else {
            return .success(ImageInfo(format: format, width: width, height: height, frames: Int(result.frames)))
        }
        return .failure(failure)
    }

    /// The failure a decoder's status and reason mean; nil for IW_OK.
    static func failure(status: iw_status, format: ImageFormat, reason: String, width: Int, height: Int,
                        maxPixels: UInt64) -> ValidationFailure? {
        let name = format.displayName
        switch status {
        case IW_OK:
            return nil
        case IW_TRUNCATED:
            return ValidationFailure("truncated \(name): \(reason)")
        case IW_TOO_LARGE where !reason.isEmpty:
            // A limit other than one image's size (GIF frames in total).
            return ValidationFailure("\(name) \(reason)")
        case IW_TOO_LARGE:
            return Limits.tooLarge(name, width: width, height: height, maxPixels: maxPixels)
        case IW_NO_PIXELS:
            return ValidationFailure("\(name) has no pixels: \(reason)")
        case IW_NO_DECODER:
            // Not a verdict on the data: the library is missing here.
            // `AVIF: cannot validate, libavif is not installed (apt-get install libavif15)`
            return ValidationFailure("\(name): \(reason)", kind: .noDecoder)
        case IW_OVER_MEMORY:
            // The decoder's size is larger than the header the estimate read.
            return ValidationFailure("\(name) \(reason) (--decode-memory)", kind: .overDecodeMemory)
        case IW_TOO_COMPLEX:
            return tooComplex(format, width: width, height: height, spent: 0, limit: 0, where: reason)
        case IW_NO_MEMORY:
            return ValidationFailure("\(name) could not be decoded: \(reason)")
        default:
            return ValidationFailure("corrupt \(name): \(reason)")
        }
    }
}

extension CodecBridge {
    /// `JPEG 6000x6000 took 10.0 s of CPU to decode, over --decode-timeout 10s (stopped in scan 812)`
    static func tooComplex(_ format: ImageFormat, width: Int, height: Int, spent: Double, limit: Double,
                           where stop: String) -> ValidationFailure {
        let size = width > 0 && height > 0 ? " \(width)x\(height)" : ""
        let limitText = limit == limit.rounded() ? String(Int(limit)) : String(limit)
        let spentText = String(Double((spent * 10).rounded()) / 10)
        return ValidationFailure("\(format.displayName)\(size) took \(spentText) s of CPU to decode, over --decode-timeout \(limitText)s"
                                    + (stop.isEmpty ? "" : " (\(stop))"), kind: .tooComplex)
    }
}

/// The CPU time of the calling thread (what `--decode-timeout` bounds).
enum ThreadCPUClock {
    static func nanoseconds() -> UInt64 {
        var t = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0 else { return 0 }
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }
}

/// The two size verdicts shared by decoded and header-only validation.
enum Limits {
    static func tooLarge(_ name: String, width: Int, height: Int, maxPixels: UInt64) -> ValidationFailure {
        ValidationFailure("\(name) \(width)x\(height) exceeds the pixel limit of \(maxPixels)")
    }

    /// Checks dimensions a header gave; nil when acceptable or unknown.
    static func check(_ info: ImageInfo, maxPixels: UInt64) -> ValidationFailure? {
        guard let w = info.width, let h = info.height else { return nil }
        let name = info.format.displayName
        if w == 0 || h == 0 { return ValidationFailure("\(name) has no pixels: header gives \(w)x\(h)") }
        let pixels = UInt64(w).multipliedReportingOverflow(by: UInt64(h))
        if pixels.overflow || pixels.partialValue > maxPixels {
            return tooLarge(name, width: w, height: h, maxPixels: maxPixels)
        }
        return nil
    }
}
