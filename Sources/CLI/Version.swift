/// The version `--version` prints; raised with each release.
public enum Version {
    public static let number = "0.1.0"
}
