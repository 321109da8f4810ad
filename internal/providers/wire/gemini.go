package wire

import "encoding/json"

// GeminiRequest is a generateContent (and streamGenerateContent) body: REST,
// camelCase field names; the model is named by the path.
type GeminiRequest struct {
	SystemInstruction *GeminiContent          `json:"systemInstruction,omitempty"`
	Contents          []GeminiContent         `json:"contents"`
	Tools             []GeminiTool            `json:"tools,omitempty"`
	GenerationConfig  *GeminiGenerationConfig `json:"generationConfig,omitempty"`
}

// GeminiContent is one turn (role user or model) or the system instruction.
type GeminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []GeminiPart `json:"parts"`
}

// GeminiPart is a part of a content: text (a thought when Thought is set),
// inline or file data, a function call or response, and the parts only a
// client's body carries.
type GeminiPart struct {
	Text    *string `json:"text,omitempty"`
	Thought bool    `json:"thought,omitempty"`
	// ThoughtSignature is what the API gave with a part (the first function
	// call of a turn) and wants back with it.
	ThoughtSignature string                  `json:"thoughtSignature,omitempty"`
	InlineData       *GeminiBlob             `json:"inlineData,omitempty"`
	FileData         *GeminiFileData         `json:"fileData,omitempty"`
	FunctionCall     *GeminiFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *GeminiFunctionResponse `json:"functionResponse,omitempty"`
	// The code execution tool's parts, server-side tools' calls and
	// responses, and audio transcriptions.
	ExecutableCode      json.RawMessage `json:"executableCode,omitempty"`
	CodeExecutionResult json.RawMessage `json:"codeExecutionResult,omitempty"`
	ToolCall            json.RawMessage `json:"toolCall,omitempty"`
	ToolResponse        json.RawMessage `json:"toolResponse,omitempty"`
	AudioTranscription  json.RawMessage `json:"audioTranscription,omitempty"`
}

// GeminiBlob is inline data (an image).
type GeminiBlob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

// GeminiFileData is data named by URI.
type GeminiFileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// GeminiFunctionCall is a call of the model's; the API gives it no id, a
// client may.
type GeminiFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// GeminiFunctionResponse is a call's result, paired with its call by id or
// else by order and name.
type GeminiFunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// GeminiResult is a functionResponse.response as Gemini reads it: "output"
// is the function's output and "error" its failure.
type GeminiResult struct {
	Output *string `json:"output,omitempty"`
	Error  *string `json:"error,omitempty"`
}

// GeminiTool holds function declarations (the other tools are not read).
type GeminiTool struct {
	FunctionDeclarations []GeminiFunctionDeclaration `json:"functionDeclarations,omitempty"`
}

// GeminiFunctionDeclaration is a function tool.
type GeminiFunctionDeclaration struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// ParametersJSONSchema takes a JSON schema as is; Parameters is an
	// OpenAPI subset.
	Parameters           json.RawMessage `json:"parameters,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

// GeminiGenerationConfig is the answer's format, limit and thinking.
type GeminiGenerationConfig struct {
	ResponseMimeType string `json:"responseMimeType,omitempty"`
	// ResponseJSONSchema is the answer's JSON schema; ResponseSchema, an
	// OpenAPI subset, is the older form.
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	ResponseSchema     json.RawMessage `json:"responseSchema,omitempty"`
	MaxOutputTokens    int             `json:"maxOutputTokens,omitempty"`
	// ThinkingConfig asks for thoughts (IncludeThoughts) and bounds them.
	ThinkingConfig *GeminiThinkingConfig `json:"thinkingConfig,omitempty"`
}

// GeminiThinkingConfig is a generationConfig's thinking setting.
type GeminiThinkingConfig struct {
	IncludeThoughts bool `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int `json:"thinkingBudget,omitempty"`
}
