// Stylelint for static/css: the recommended rules, and colours only through the design
// tokens (static/css/tokens.css is the one file that writes a raw colour).

export default {
  extends: ["stylelint-config-recommended"],
  rules: {
    "color-no-hex": true,
    // The components were written in cascade order, a state's rule after its base (".pile"
    // then "[data-phase=lobby] .pile"); sorting by specificity would reorder them for nothing.
    "no-descending-specificity": null,
    "color-named": "never",
    "function-disallowed-list": ["rgb", "rgba", "hwb", "lab", "lch", "oklab", "oklch", "color"],
  },
  overrides: [
    {
      files: ["static/css/tokens.css"],
      rules: { "color-no-hex": null },
    },
  ],
};
