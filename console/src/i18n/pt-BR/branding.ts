import type { WordsOf } from '../../ui/i18n.js'
import type { branding as en } from '../en/branding.js'

export const branding: WordsOf<typeof en> = {
  'brand.chooseType': 'Escolha uma imagem PNG, JPEG ou WebP.',
  'brand.tooBig': 'Escolha uma imagem de no máximo {kb} KB.',
  'brand.unreadable': 'Não foi possível ler a imagem.',
  'brand.removeLogo': 'Remover o logotipo',
  'brand.ownColour': 'A do próprio console',
  'brand.useOwn': 'Usar a cor do console',
  'brand.logoAlt': 'Logotipo do tenant',
}
