package tokens

// Framing overheads, in tokens, added to every counter's content count.
const (
	// messageOverhead is OpenAI's per-message framing for current chat models
	// (<|start|>, role, <|message|>...<|end|>: "tokens_per_message = 3" in the
	// OpenAI cookbook's num_tokens_from_messages), plus 1 for the role name,
	// which the cookbook counts by encoding the "role" value.
	messageOverhead = 3 + 1
	// replyPriming is the cookbook's "every reply is primed with
	// <|start|>assistant<|message|>": 3 tokens once per request. CountPreamble
	// adds it to the system share because it is paid once per request.
	replyPriming = 3
	// toolCallOverhead frames one tool call (id, type and function wrapper
	// around name and arguments); OpenAI does not publish it, 3 matches
	// counts reported by the API for single-call messages to within a token.
	toolCallOverhead = 3
	// toolResultOverhead frames one tool result (its tool_call_id field).
	toolResultOverhead = 3
	// toolsBlockOverhead and toolDefinitionOverhead frame the tool list:
	// OpenAI renders tools as a TypeScript-like namespace ("namespace
	// functions { type name = (_: {...}) => any; }"); these are the constant
	// parts, estimated from API-reported prompt counts with and without tools.
	toolsBlockOverhead     = 12
	toolDefinitionOverhead = 8
	// responseFormatOverhead frames a JSON schema response format.
	responseFormatOverhead = 6
)

// Image costs are fixed per provider because the state carries no image
// dimensions; each is the provider's documented cost of a typical image:
//   - openai: 765 = a 1024x1024 image at "high"/"auto" detail
//     (85 base + 4 tiles x 170); "low" detail would be 85.
//   - anthropic: 1600 ~ (width x height)/750 for a ~1.15 megapixel image,
//     the size Anthropic scales large images down to.
//   - google: 258, Gemini's documented cost of an image up to 384x384
//     (larger images are tiled at 258 per tile; we assume one tile).
//   - anything else: 765, the OpenAI figure, since OpenAI-compatible servers
//     (Ollama, vLLM) are the common case.
var imageTokensByProvider = map[string]int{
	"openai":    765,
	"anthropic": 1600,
	"google":    258,
}

const defaultImageTokens = 765

func imageTokens(provider string) int {
	if n, ok := imageTokensByProvider[provider]; ok {
		return n
	}
	return defaultImageTokens
}

// Calibration factors for providers without a public tokenizer, applied to a
// tiktoken count when a registry entry sets no factor. Sources:
//   - anthropic 1.20 x cl100k_base: Claude 3/4 models report about 15-25%
//     more input tokens than cl100k_base for English prose and code when
//     compared with Anthropic's count_tokens endpoint (community
//     measurements); 1.20 errs on the high, safe side.
//   - google 1.10 x o200k_base: Gemini's SentencePiece vocabulary (256k) is
//     close to o200k_base in tokens per character ("about 4 characters per
//     token" in Google's docs); 10% margin for code and non-Latin scripts.
//   - mistral 1.10 x o200k_base: the Tekken tokenizer (tiktoken-style,
//     131k vocabulary) is close to o200k_base; 10% margin.
//   - anything else 1.10: a margin over whichever encoding the entry names.
//
// Open-weight entries in models.yaml set their own factor: 1.00 for
// tokenizers that extend cl100k_base (Llama 3, Qwen 2.5/3, Phi-4), 1.25 for
// 32k-vocabulary SentencePiece models (Mistral 7B, Mixtral, Phi-3, CodeLlama).
var factorByProvider = map[string]float64{
	"anthropic": 1.20,
	"google":    1.10,
	"mistral":   1.10,
}

const defaultFactor = 1.10

func providerFactor(provider string) float64 {
	if f, ok := factorByProvider[provider]; ok {
		return f
	}
	return defaultFactor
}
