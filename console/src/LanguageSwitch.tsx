import { chooseLocale, t } from './i18n'
import { LOCALES, useLocale, type Locale } from './ui/i18n'

// Each language named in itself, so a reader who cannot read the current one still finds theirs.
const NAMES: Record<Locale, string> = { en: 'English', 'pt-BR': 'Português (Brasil)' }

/**
 * The console's language, over the browser's: the choice is kept in localStorage for later visits. `compact`
 * (the header, where the menu needs the room): the label is for screen readers only, the options say enough.
 */
export function LanguageSwitch({ compact = false }: { compact?: boolean }) {
  const current = useLocale()
  return (
    <label className="language">
      <span className={compact ? 'visually-hidden' : undefined}>{t('shell.language')}</span>
      <select value={current} onChange={(e) => void chooseLocale(e.currentTarget.value as Locale, true)}>
        {LOCALES.map((l) => (
          <option key={l} value={l} lang={l}>
            {NAMES[l]}
          </option>
        ))}
      </select>
    </label>
  )
}
