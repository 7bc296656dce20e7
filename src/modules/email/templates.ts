// Messages in the tenant's locale, text and HTML. HTML is built only through the `html` tag, which
// escapes every interpolated value unless it is itself an `html` fragment: escaping holds by
// construction, not by remembering to call a function.

/** A piece of HTML that is safe as it is: only `html` makes one. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

/** Escapes the five characters that matter in HTML text and attribute values. */
export function escapeHtml(s: string): string {
  return s
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;')
}

type HtmlValue = SafeHtml | string | number

/** Tagged template: literal parts kept, every interpolation escaped (SafeHtml fragments kept as they are). */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? ''
  values.forEach((v, i) => {
    out += v instanceof SafeHtml ? v.value : escapeHtml(String(v))
    out += strings[i + 1] ?? ''
  })
  return new SafeHtml(out)
}

/** A message that carries a link: a reset, a verification, or the confirmation of a new address. */
export type Purpose = 'reset' | 'verify' | 'change'
/** A message without a link: the notice to the old address once the email changed. */
type NoticePurpose = 'email-changed'
export type Locale = 'en' | 'pt-BR'

/** What a message says; the values are the tenant's and the user's, never trusted. */
export type MessageInput = LinkMessageInput | NoticeInput

interface CommonInput {
  locale: Locale
  tenantName: string
  /** The address the message goes to, named in the body so a reader knows which account it is about. */
  recipient: string
}

/** A message with a single-use link, valid `minutes`. */
interface LinkMessageInput extends CommonInput {
  purpose: Purpose
  link: string
  minutes: number
}

/** A notice: no link, no token, nothing to click. */
interface NoticeInput extends CommonInput {
  purpose: NoticePurpose
}

export interface RenderedMessage {
  subject: string
  text: string
  html: string
}

interface NoticeWords {
  subject: (tenant: string) => string
  intro: (tenant: string) => string
  ignore: string
  sentTo: (address: string) => string
}

interface Words extends NoticeWords {
  action: string
  validity: (minutes: number) => string
}

const WORDS: Record<Locale, Record<Purpose, Words>> = {
  en: {
    reset: {
      subject: (t) => `Reset your ${t} password`,
      intro: (t) => `Someone asked to reset the password of your ${t} account.`,
      action: 'Choose a new password',
      validity: (m) => `This link is valid for ${m} minutes and can be used once.`,
      ignore: 'If you did not ask for this, ignore this message: your password stays as it is.',
      sentTo: (a) => `This message was sent to ${a}.`,
    },
    verify: {
      subject: (t) => `Confirm your email address for ${t}`,
      intro: (t) => `Confirm that this address belongs to your ${t} account.`,
      action: 'Confirm my address',
      validity: (m) => `This link is valid for ${m} minutes and can be used once.`,
      ignore: 'If you did not create this account, ignore this message.',
      sentTo: (a) => `This message was sent to ${a}.`,
    },
    change: {
      subject: (t) => `Confirm your new email address for ${t}`,
      intro: (t) =>
        `Someone asked to make this the email address of your ${t} account. Nothing changes until it is confirmed.`,
      action: 'Confirm my new address',
      validity: (m) => `This link is valid for ${m} minutes and can be used once.`,
      ignore: 'If you did not ask for this, ignore this message: the account keeps its current address.',
      sentTo: (a) => `This message was sent to ${a}.`,
    },
  },
  'pt-BR': {
    reset: {
      subject: (t) => `Redefina sua senha de ${t}`,
      intro: (t) => `Alguém pediu para redefinir a senha da sua conta de ${t}.`,
      action: 'Escolher uma nova senha',
      validity: (m) => `Este link vale por ${m} minutos e pode ser usado uma vez.`,
      ignore: 'Se você não pediu isso, ignore esta mensagem: sua senha continua a mesma.',
      sentTo: (a) => `Esta mensagem foi enviada para ${a}.`,
    },
    verify: {
      subject: (t) => `Confirme seu endereço de e-mail em ${t}`,
      intro: (t) => `Confirme que este endereço é da sua conta de ${t}.`,
      action: 'Confirmar meu endereço',
      validity: (m) => `Este link vale por ${m} minutos e pode ser usado uma vez.`,
      ignore: 'Se você não criou esta conta, ignore esta mensagem.',
      sentTo: (a) => `Esta mensagem foi enviada para ${a}.`,
    },
    change: {
      subject: (t) => `Confirme seu novo endereço de e-mail em ${t}`,
      intro: (t) =>
        `Alguém pediu para tornar este o endereço de e-mail da sua conta de ${t}. Nada muda até a confirmação.`,
      action: 'Confirmar meu novo endereço',
      validity: (m) => `Este link vale por ${m} minutos e pode ser usado uma vez.`,
      ignore: 'Se você não pediu isso, ignore esta mensagem: a conta continua com o endereço atual.',
      sentTo: (a) => `Esta mensagem foi enviada para ${a}.`,
    },
  },
}

const NOTICE_WORDS: Record<Locale, Record<NoticePurpose, NoticeWords>> = {
  en: {
    'email-changed': {
      subject: (t) => `The email address of your ${t} account was changed`,
      intro: (t) => `The email address of your ${t} account was changed: this address is no longer on it.`,
      ignore:
        'If you made this change, there is nothing to do. If you did not, tell your administrator at once.',
      sentTo: (a) => `This message was sent to ${a}.`,
    },
  },
  'pt-BR': {
    'email-changed': {
      subject: (t) => `O endereço de e-mail da sua conta de ${t} foi alterado`,
      intro: (t) =>
        `O endereço de e-mail da sua conta de ${t} foi alterado: este endereço não está mais nela.`,
      ignore: 'Se foi você, não há nada a fazer. Se não foi, avise já o seu administrador.',
      sentTo: (a) => `Esta mensagem foi enviada para ${a}.`,
    },
  },
}

// Why strip control characters from the subject: a header value must not carry a line break.
// eslint-disable-next-line no-control-regex -- control characters are what it removes
const oneLine = (s: string) => s.replace(/[\u0000-\u001f\u007f]+/g, ' ')

/** Subject, plain text and HTML of one message. No remote image, no tracker: the link is the only URL. */
export function renderMessage(m: MessageInput): RenderedMessage {
  if (m.purpose === 'email-changed') return renderNotice(m)
  const w = WORDS[m.locale][m.purpose]
  const text = [
    w.intro(m.tenantName),
    '',
    `${w.action}: ${m.link}`,
    '',
    w.validity(m.minutes),
    '',
    w.ignore,
    w.sentTo(m.recipient),
    '',
  ].join('\n')
  const body = html`<!doctype html>
    <html lang="${m.locale}">
      <head>
        <meta charset="utf-8" />
        <title>${w.subject(m.tenantName)}</title>
      </head>
      <body style="font-family: sans-serif; line-height: 1.5">
        <p>${w.intro(m.tenantName)}</p>
        <p><a href="${m.link}">${w.action}</a></p>
        <p>${w.validity(m.minutes)}</p>
        <p>${w.ignore}</p>
        <p>${w.sentTo(m.recipient)}</p>
      </body>
    </html> `
  return { subject: oneLine(w.subject(m.tenantName)), text, html: body.value }
}

/** A notice in the same frame. Why no link: the old mailbox may no longer be the user's, so it gets nothing to use. */
function renderNotice(m: NoticeInput): RenderedMessage {
  const w = NOTICE_WORDS[m.locale][m.purpose]
  const text = [w.intro(m.tenantName), '', w.ignore, w.sentTo(m.recipient), ''].join('\n')
  const body = html`<!doctype html>
    <html lang="${m.locale}">
      <head>
        <meta charset="utf-8" />
        <title>${w.subject(m.tenantName)}</title>
      </head>
      <body style="font-family: sans-serif; line-height: 1.5">
        <p>${w.intro(m.tenantName)}</p>
        <p>${w.ignore}</p>
        <p>${w.sentTo(m.recipient)}</p>
      </body>
    </html> `
  return { subject: oneLine(w.subject(m.tenantName)), text, html: body.value }
}
