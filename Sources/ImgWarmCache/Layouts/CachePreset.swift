/// `--preset`: an app stack's layout, cache folder name and size limit at
/// once, for the libraries that share a format but not a folder.
/// Where a library sizes its cache from free disk, the preset takes the
/// lower bound of its rule (what a nearly full device gets).
public enum CachePreset: String, CaseIterable, Sendable {
    /// Picasso 2.x with its OkHttp downloader (`Utils.createDefaultCacheDir`:
    /// `picasso-cache`; `calculateDiskCacheSize`: 2% of the disk within
    /// MIN_DISK_CACHE_SIZE 5 MB and MAX_DISK_CACHE_SIZE 50 MB).
    case picasso
    /// Coil 1.x (`CoilUtils.createDefaultCache`: `image_cache`; 2% of the
    /// disk within 10 MB and 250 MB).
    case coil1
    /// React Native's `fetch` and networking (`OkHttpClientProvider`:
    /// `http-cache`, 10 * 1024 * 1024).
    case reactNativeFetch = "react-native-fetch"
    /// React Native's `<Image>` on Android: Fresco's `image_cache`, 40 MB
    /// (`DiskCacheConfig.Builder`).
    case reactNativeImage = "react-native-image"

    public var layout: CacheLayoutKind {
        self == .reactNativeImage ? .fresco : .okhttp
    }

    /// The folder under the app's cache dir.
    public var folder: String {
        switch self {
        case .picasso: return "picasso-cache"
        case .coil1: return "image_cache"
        case .reactNativeFetch: return "http-cache"
        case .reactNativeImage: return "image_cache"
        }
    }

    public var sizeLimit: UInt64 {
        switch self {
        case .picasso: return 5 * 1024 * 1024
        case .coil1, .reactNativeFetch: return 10 * 1024 * 1024
        case .reactNativeImage: return 40 * 1024 * 1024
        }
    }
}
