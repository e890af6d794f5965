import ArgumentParser
import ImgWarmKit

struct CachePathCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "path",
        abstract: "Print the cache file path for each URL (or cache key).",
        discussion: "An http(s) URL is keyed as a manifest line is (the URL an app's URL(string:) gives, percent- and IDNA-encoded); anything else is taken as a cache key verbatim. Prints the existing file (sdwebimage: the name with extension, or the bare-MD5 fallback; kingfisher: SHA-256 of the key, if its deadline has not passed; nuke: SHA-1 of the key; glide: <SHA-256 of the key>.0 and coil, coil2: <SHA-256 of the key>.1, okhttp: <MD5 of the URL as OkHttp prints it>.1, when the journal holds the entry; flutter: the file its database row names) or else the name imgwarm would write (flutter: its files folder, as the file name is chosen when stored). Exits 0 when every entry exists, 1 otherwise."
    )

    @OptionGroup var cacheOptions: CacheOptions

    @Argument(help: ArgumentHelp("URLs or cache keys.", valueName: "url"))
    var urls: [String]

    func validate() throws {
        if urls.isEmpty { throw ValidationError("give at least one URL") }
    }

    func run() throws {
        let cache = try cacheOptions.inspectedCache(missing: .isEmpty, listing: false)
        try cache.openBackend(writable: false)
        var allExist = true
        for argument in urls {
            // The default key of a manifest line with this URL (a layout
            // keyed by the URL keys the text as written).
            let parsed = try? ParsedURL.parse(argument).get()
            let key = cache.layout.manifestKeyRule.map { $0.key(argument) } ?? parsed?.absolute ?? argument
            if let existing = cache.existingPath(forKey: key) {
                print(existing)
            } else {
                allExist = false
                print(cache.path(forKey: key))
            }
        }
        if !allExist { throw ExitCode(ExitStatus.entriesFailed) }
    }
}
