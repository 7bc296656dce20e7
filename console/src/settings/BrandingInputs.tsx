import { useState } from 'react'
import { t } from '../i18n'

// The two fields of Settings → Branding that a text box cannot hold well (issue 44): the logo, picked as a file
// and sent as the data: URL the API takes, and the colour, picked with the browser's own colour input.

/** The image types the API takes for a logo, and its largest size (openapi/components/branding.yaml). */
const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp']
// The service's own limit (src/modules/tenants/branding.ts): its base64 fits a 64 KiB body.
const MAX_LOGO_BYTES = 45 * 1024

/** What a brand input gets from the form: the field's id and aria attributes, its value and its setter. */
export interface BrandInputProps {
  common: Record<string, unknown>
  label: string
  value: unknown
  onChange: (value: unknown) => void
}

/** A file picker that turns a PNG, JPEG or WebP of at most 45 KB into a data: URL, with a preview. */
function LogoInput({ common, label, value, onChange }: BrandInputProps) {
  const [problem, setProblem] = useState('')
  const logo = typeof value === 'string' && value !== '' ? value : null
  const pick = (file: File | undefined) => {
    setProblem('')
    if (!file) return
    // Checked here for a message at once; the service checks the bytes again, whatever a page sends.
    if (!LOGO_TYPES.includes(file.type)) return setProblem(t('brand.chooseType'))
    if (file.size > MAX_LOGO_BYTES) return setProblem(t('brand.tooBig', { kb: MAX_LOGO_BYTES / 1024 }))
    const reader = new FileReader()
    reader.onload = () => onChange(String(reader.result))
    reader.onerror = () => setProblem(t('brand.unreadable'))
    reader.readAsDataURL(file)
  }
  return (
    <div className="stack">
      {logo && <img src={logo} alt={`${label}: preview`} className="logo-preview" />}
      <input
        {...common}
        type="file"
        accept={LOGO_TYPES.join(',')}
        onChange={(e) => pick(e.target.files?.[0])}
      />
      {problem && (
        <small role="alert" className="field-error">
          {problem}
        </small>
      )}
      {logo && (
        <button type="button" className="secondary" onClick={() => onChange(null)}>
          {t('brand.removeLogo')}
        </button>
      )}
    </div>
  )
}

/** The browser's colour input for `#rrggbb`, and a way back to the console's own colour (null). */
function ColorInput({ common, value, onChange }: BrandInputProps) {
  const color = typeof value === 'string' && value !== '' ? value.toLowerCase() : null
  return (
    <span className="row">
      {/* Why a grey when unset: a colour input always shows some colour; it is sent only once changed. */}
      <input {...common} type="color" value={color ?? '#808080'} onChange={(e) => onChange(e.target.value)} />
      <span>{color ?? t('brand.ownColour')}</span>
      {color && (
        <button type="button" className="secondary" onClick={() => onChange(null)}>
          {t('brand.useOwn')}
        </button>
      )}
    </span>
  )
}

/** The inputs of fields that a plain text box would serve badly, by JSON pointer. */
export const BRAND_INPUTS: Record<string, (props: BrandInputProps) => JSX.Element> = {
  '/branding/logo': LogoInput,
  '/branding/color': ColorInput,
}
