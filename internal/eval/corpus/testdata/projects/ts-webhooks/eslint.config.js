// @ts-check
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "warn",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      eqeqeq: ["error", "always"],
      "no-console": ["warn", { allow: ["error"] }],
      "prefer-const": "error",
    },
  },
  {
    files: ["scripts/**/*.js", "legacy/**/*.js"],
    languageOptions: { sourceType: "module", globals: { ...globals.node } },
    rules: {
      "no-unused-vars": "warn",
    },
  },
);
