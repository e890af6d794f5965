extension ImageFormat {
    /// The name a person reads in a reason: `truncated JPEG: ...`.
    public var displayName: String {
        switch self {
        case .jpeg: return "JPEG"
        case .png: return "PNG"
        case .gif: return "GIF"
        case .tiff: return "TIFF"
        case .bmp: return "BMP"
        case .webp: return "WebP"
        case .heic: return "HEIC"
        case .heif: return "HEIF"
        case .pdf: return "PDF"
        case .svg: return "SVG"
        case .avif: return "AVIF"
        case .jxl: return "JPEG XL"
        case .ico: return "ICO"
        case .unknown: return "unknown format"
        }
    }
}
