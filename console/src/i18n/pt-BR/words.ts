import type { WordsOf } from '../../ui/i18n.js'
import type { words as en } from '../en/words.js'

export const words: WordsOf<typeof en> = {
  'list.and': ' e ',
  'policy.capital': 'uma letra maiúscula',
  'policy.small': 'uma letra minúscula',
  'policy.digit': 'um dígito',
  'policy.symbol': 'um símbolo',
  'policy.atLeast': 'Pelo menos {min} caracteres',
  'policy.with': ', com {list}',
  'policy.notCommon': '; não pode ser uma senha comum.',
  'policy.bytes': 'No máximo {max} bytes — cerca de {max} letras, menos com acentos ou emoji.',
  'policy.tooLong':
    'Esta senha é longa demais ({bytes} bytes): no máximo {max} bytes — cerca de {max} letras, menos com acentos ou emoji.',
  'unit.days': { one: '{count} dia', other: '{count} dias' },
  'unit.hours': { one: '{count} hora', other: '{count} horas' },
  'unit.minutes': { one: '{count} minuto', other: '{count} minutos' },
  'unit.seconds': { one: '{count} segundo', other: '{count} segundos' },
  'unit.name.days': 'dias',
  'unit.name.hours': 'horas',
  'unit.name.minutes': 'minutos',
  'unit.name.seconds': 'segundos',
  'unit.label': '{field}: unidade',
  'duration.atLeast': 'deve ser de pelo menos {time}',
  'duration.atMost': 'deve ser de no máximo {time}',
  'duration.moreThan': 'deve ser de mais de {time}',
  'duration.lessThan': 'deve ser de menos de {time}',
  'webauthn.NotAllowedError': 'O pedido da passkey foi cancelado ou expirou. Nada foi alterado.',
  'webauthn.AbortError': 'O pedido da passkey foi fechado. Nada foi alterado.',
  'webauthn.InvalidStateError': 'Este autenticador já guarda uma das suas passkeys.',
  'webauthn.NotSupportedError': 'Este navegador ou seus autenticadores não podem usar uma passkey aqui.',
  'webauthn.ConstraintError':
    'Este autenticador não pode guardar uma passkey que verifique você (um PIN ou biometria).',
  'webauthn.SecurityError':
    'O navegador recusou uma passkey neste endereço: o auth_config.webauthn do tenant deve citar esta origem.',
}
