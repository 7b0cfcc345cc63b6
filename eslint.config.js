// ESLint (flat config) for the page's scripts (static/js) and their unit tests (tests/js).
// Besides the recommended rules, one of our own: a module keeps no state of its own (the
// page's state lives in store.js), so a newcomer finds every piece of it in one place.

import js from "@eslint/js";
import globals from "globals";

const MUTATORS = new Set(["set", "add", "delete", "clear", "push", "pop", "shift", "unshift", "splice", "sort", "reverse", "fill"]);

function isObjectAssign(callee) {
  return callee.type === "MemberExpression" && callee.object.name === "Object" && callee.property.name === "assign";
}

// A module-level `let`/`var`, or a module-level constant changed in place (a property set,
// a Map or array changed, Object.assign), is state outside the store.
const noModuleState = {
  meta: {
    type: "problem",
    docs: { description: "no mutable state at module level: keep it in the store (static/js/store.js)" },
    messages: {
      variable: "Module-level `{{kind}} {{name}}` is state outside the store: keep it in store.js's view, or inside a function.",
      mutated: "Module-level `{{name}}` is changed here: state belongs in the store (store.js), not in a module.",
    },
    schema: [],
  },
  create(context) {
    return {
      "Program:exit"(program) {
        const top = context.sourceCode.getScope(program);
        const scope = top.type === "module" ? top : top.childScopes.find((child) => child.type === "module") || top;
        for (const variable of scope.variables) {
          const definition = variable.defs[0];
          if (!definition || definition.type !== "Variable") continue;
          const kind = definition.parent.kind;
          if (kind !== "const") {
            context.report({ node: definition.node, messageId: "variable", data: { kind, name: variable.name } });
            continue;
          }
          for (const reference of variable.references) {
            const id = reference.identifier;
            const parent = id.parent;
            let changed = false;
            if (parent.type === "MemberExpression" && parent.object === id) {
              const use = parent.parent;
              changed =
                (use.type === "AssignmentExpression" && use.left === parent) ||
                use.type === "UpdateExpression" ||
                (use.type === "UnaryExpression" && use.operator === "delete") ||
                (use.type === "CallExpression" && use.callee === parent && MUTATORS.has(parent.property.name));
            } else if (parent.type === "CallExpression" && parent.arguments[0] === id && isObjectAssign(parent.callee)) {
              changed = true;
            }
            if (changed) context.report({ node: id, messageId: "mutated", data: { name: variable.name } });
          }
        }
      },
    };
  },
};

export default [
  { ignores: ["node_modules/", "static/vendor/", ".venv/", "build/"] },
  js.configs.recommended,
  {
    files: ["static/js/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.browser },
    plugins: { slapjack: { rules: { "no-module-state": noModuleState } } },
    rules: {
      "slapjack/no-module-state": "error",
      "no-unused-vars": ["error", { args: "none" }],
      eqeqeq: "error",
      "prefer-const": "error",
      "no-var": "error",
    },
  },
  {
    files: ["tests/js/**/*.js", "eslint.config.js", "stylelint.config.js", "bundle.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.node },
  },
];
