import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {
    ignores: [
      'generated/**',
      'dist/**',
      'clients/typescript/src/generated/**',
      'clients/typescript/dist/**',
      '.scratch/**',
      'node_modules/**',
      'coverage/**',
      '.tap/**',
      '.data/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
)
