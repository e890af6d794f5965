public enum ImgWarmVersion {
    public static let string = "0.1.0"
    /// The User-Agent imgwarm sends unless `--user-agent` replaces it.
    public static var userAgent: String { "imgwarm/\(string)" }
}
