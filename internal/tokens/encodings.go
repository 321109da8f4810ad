package tokens

import (
	"fmt"
	"path"
	"sort"
	"sync"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// Encoding names.
const (
	EncodingCL100K = "cl100k_base"
	EncodingO200K  = "o200k_base"
	EncodingP50K   = "p50k_base"
)

// encodingSpec is what tiktoken-go knows of an encoding: the file name its BPE
// loader resolves (to the embedded copy) and the pre-tokenizer regex, copied
// from tiktoken-go's encoding.go because the library keeps both unexported.
// Counting splits with split, the pattern's hand-written equivalent; the
// pattern itself is the tests' oracle for it.
type encodingSpec struct {
	name    string
	bpeFile string
	pattern string
	split   splitFunc
}

var encodingSpecs = [...]encodingSpec{
	{EncodingCL100K, "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
		`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`, splitCL100K},
	{EncodingO200K, "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
			`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
			`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`, splitO200K},
	{EncodingP50K, "https://openaipublic.blob.core.windows.net/encodings/p50k_base.tiktoken",
		`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`, splitP50K},
}

// KnownEncodings lists the encoding names the service builds, sorted.
func KnownEncodings() []string {
	out := make([]string, 0, len(encodingSpecs))
	for _, s := range encodingSpecs {
		out = append(out, s.name)
	}
	sort.Strings(out)
	return out
}

func knownEncoding(name string) bool {
	for _, s := range encodingSpecs {
		if s.name == name {
			return true
		}
	}
	return false
}

// offlineLoader makes tiktoken-go read its embedded BPE files instead of
// downloading them. tiktoken.SetBpeLoader sets a library-global without
// synchronisation, so it runs once per process (racing writes would be a data
// race, and later services must not reset it under a concurrent GetEncoding).
// It runs in NewService, not in init, so importing the package has no effect.
var offlineLoader sync.Once

func installOfflineLoader() {
	offlineLoader.Do(func() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) })
}

// buildEncoders makes every encoding, each to be built once from the
// embedded BPE data when first used (Service.Preload builds them all).
func buildEncoders() (map[string]*encoder, error) {
	installOfflineLoader()
	out := make(map[string]*encoder, len(encodingSpecs))
	for i, s := range encodingSpecs {
		out[s.name] = &encoder{name: s.name, id: uint8(i + 1), split: s.split, load: func() (*rankTable, error) {
			// The file tiktoken-go-loader embeds, read into the table directly.
			file, err := assets.Assets.ReadFile(path.Base(s.bpeFile))
			if err != nil {
				return nil, fmt.Errorf("load %s: %w", s.name, err)
			}
			t, err := parseRankTable(file)
			if err != nil {
				return nil, fmt.Errorf("load %s: %w", s.name, err)
			}
			return t, nil
		}}
	}
	return out, nil
}
