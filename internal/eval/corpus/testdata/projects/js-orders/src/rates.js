export const RATES = { AT: 0.2, BE: 0.21, DE: 0.19, ES: 0.21, FR: 0.2, IE: 0.23, IT: 0.22, NL: 0.21, PT: 0.23 };
export const REDUCED = { AT: 0.1, BE: 0.06, DE: 0.07, ES: 0.1, FR: 0.055, IE: 0.135, IT: 0.1, NL: 0.09, PT: 0.06 };
