import ArgumentParser
import ImgWarmKit

struct CachePathCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "path",
        abstract: "Print the cache file path for each URL (or cache key).",
        discussion: "Prints the existing file (sdwebimage: the name with extension, or the bare-MD5 fallback; kingfisher: SHA-256 of the key, if its deadline has not passed; nuke: SHA-1 of the key) or else the name imgwarm would write. Exits 0 when every entry exists, 1 otherwise."
    )

    @OptionGroup var cacheOptions: CacheOptions

    @Argument(help: ArgumentHelp("URLs or cache keys.", valueName: "url"))
    var urls: [String]

    func validate() throws {
        if urls.isEmpty { throw ValidationError("give at least one URL") }
    }

    func run() throws {
        let cache = try cacheOptions.existingCache()
        var allExist = true
        for url in urls {
            if let existing = cache.existingPath(forKey: url) {
                print(existing)
            } else {
                allExist = false
                print(cache.path(forKey: url))
            }
        }
        if !allExist { throw ExitCode(ExitStatus.entriesFailed) }
    }
}
